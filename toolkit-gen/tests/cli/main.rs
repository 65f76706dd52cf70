//! The `toolkit-gen` command line, run as a user runs it.
#![allow(clippy::unwrap_used)]

mod check_catalog;
mod execute;
mod krate;
mod mcp;
mod search;
mod worker;
