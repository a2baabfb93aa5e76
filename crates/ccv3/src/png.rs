//! PNG and APNG card chunks (stub: to be written).
