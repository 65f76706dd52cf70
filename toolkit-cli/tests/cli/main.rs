//! The `toolkit-gen` command line, run as a user runs it.
#![allow(clippy::unwrap_used)]

mod audit;
mod check_catalog;
mod connections;
mod credentials;
mod execute;
mod graphql;
mod krate;
mod mcp;
mod oauth;
#[path = "../../../toolkit-gateway/tests/gateway/peers.rs"]
mod peers;
mod report;
mod search;
mod secrets;
mod serve;
mod support;
mod token_store;
mod worker;
