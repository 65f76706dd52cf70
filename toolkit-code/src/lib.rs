//! The isolates of toolkit's code mode, behind one [`CodeRuntime`] trait.
//!
//! [`QuickJs`] runs a model's JavaScript in the host's process with memory, stack, time and
//! output limits; [`WorkerIsolate`] is the hardened one, a worker process per run spoken to over
//! its stdio ([`serve_worker`] is the worker's side), pooled by [`WorkerPool`]. The C build
//! (QuickJS's sources, compiled by rquickjs) lives in this crate alone.
//! `toolkit-runtime`'s `code` module (feature `code`) re-exports all of it beside `CodeMode`,
//! which presents a toolkit as one `execute` tool whose code calls these.
#![deny(missing_docs)]

mod pool;
mod quickjs;
mod runtime;
mod serve_worker;
mod worker;

pub use pool::{PoolOptions, WorkerPool};
pub use quickjs::{QuickJs, QuickJsOptions};
pub use runtime::{CodeFailure, CodeRuntime, RunLimits, RunOutput, ToolCall};
pub use serve_worker::{WorkerInput, WorkerOutput, serve_worker, serve_worker_on, worker_stdio};
pub use worker::WorkerIsolate;
