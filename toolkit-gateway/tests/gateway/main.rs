//! The gateway run as a user runs it: the built `toolkit-gateway` in front of real servers and
//! APIs on 127.0.0.1, driven by real MCP clients (the runtime's own, the TypeScript and Python
//! SDKs'), one person and several.
#![allow(clippy::unwrap_used)]

mod approval;
mod apps;
mod audit;
mod events;
mod events_webhooks;
mod example_config;
mod fidelity;
mod health;
mod isolation;
mod items_api;
mod peers;
mod reload;
mod replicas;
mod resilience;
mod resources;
mod serving;
mod skills;
mod support;
mod tasks;
mod team;
