//! ccv3-lore
#![forbid(unsafe_code)]
#![deny(missing_docs)]
