//! Lorebook entry decorators (stub: to be written).
