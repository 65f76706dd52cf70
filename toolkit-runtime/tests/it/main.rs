//! Integration tests of toolkit-runtime, in one binary (one link) with a module per concern.

mod definition;
mod input;
mod source;
mod support;
