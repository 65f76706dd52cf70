//! Integration tests of toolkit-runtime, in one binary (one link) with a module per concern.

mod support;
#[cfg(feature = "openapi")]
mod openapi_corpus;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "openapi")]
mod openapi;
