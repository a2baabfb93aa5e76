//! ccv3-prompt
#![forbid(unsafe_code)]
#![deny(missing_docs)]
