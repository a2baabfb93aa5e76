//! ccv3-tokens
#![forbid(unsafe_code)]
#![deny(missing_docs)]
