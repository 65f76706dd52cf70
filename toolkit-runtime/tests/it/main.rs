//! Integration tests of toolkit-runtime, in one binary (one link) with a module per concern.

mod assembly;
mod definition;
mod functions;
mod input;
mod model;
mod presentation;
mod source;
mod support;
