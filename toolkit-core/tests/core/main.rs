//! Integration tests of toolkit-core, in one binary (one link) with a module per concern: what a
//! toolkit does with its sources' tools (assembly, names, input checks, presentation),
//! hand-written tools (`FnSource`), and a toolkit as model APIs take it. The sources are
//! `support.rs`'s `Scripted` (a source whose tools behave as their names say), which the
//! runtime's tests share.
#![allow(clippy::unwrap_used, clippy::panic)]

mod assembly;
mod functions;
mod input;
mod model;
mod presentation;
mod source;
mod support;
