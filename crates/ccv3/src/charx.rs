//! CHARX archives (stub: to be written).
