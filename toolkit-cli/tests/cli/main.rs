//! The `toolkit-gen` command line, run as a user runs it.
#![allow(clippy::unwrap_used)]

mod audit;
mod check_catalog;
mod credentials;
mod events;
mod events_webhooks;
mod execute;
mod gateway;
mod gateway_approval;
mod gateway_apps;
mod gateway_audit;
mod gateway_connect;
mod gateway_fidelity;
mod gateway_health;
mod gateway_isolation;
mod gateway_reload;
mod gateway_replicas;
mod gateway_resilience;
mod gateway_resources;
mod gateway_skills;
mod gateway_tasks;
mod gateway_team;
mod graphql;
mod items_api;
mod krate;
mod mcp;
mod oauth;
mod report;
mod search;
mod serve_example;
mod support;
mod token_store;
mod worker;
