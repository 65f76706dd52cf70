//! Integration tests of toolkit-runtime, in one binary (one link) with a module per concern.
#![allow(clippy::unwrap_used, clippy::panic)]

mod assembly;
mod definition;
mod functions;
#[cfg(feature = "http")]
mod http;
mod input;
mod model;
#[cfg(feature = "openapi")]
mod openapi;
#[cfg(feature = "openapi")]
mod openapi_corpus;
mod presentation;
mod source;
mod support;
