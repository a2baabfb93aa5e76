//! ccv3-cbs
#![forbid(unsafe_code)]
#![deny(missing_docs)]
