//! What runs a model's code: the [`CodeRuntime`] trait.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use toolkit_core::{BoxFuture, Failure};

/// Calls one tool from code: its name and its input; gives its JSON or its failure.
pub type ToolCall =
    Arc<dyn Fn(String, Value) -> BoxFuture<'static, Result<Value, Failure>> + Send + Sync>;

/// Runs the body of an async JavaScript function in an isolate that reaches nothing but the tools
/// it is given (`tools.<name>(input)`) and `console`, and stops when its future is dropped.
///
/// [`QuickJs`](crate::QuickJs) is the runtime that ships with the crate.
pub trait CodeRuntime: Send + Sync + 'static {
    /// Runs `code` with the tools named `tools`, calling each through `call`.
    fn run<'a>(
        &'a self,
        code: &'a str,
        tools: &'a [String],
        call: ToolCall,
        limits: RunLimits,
    ) -> BoxFuture<'a, Result<RunOutput, CodeFailure>>;
}

/// The bounds of one run.
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    /// When the run must have ended.
    pub deadline: Instant,
    /// The longest result, in characters of JSON (UTF-16 code units, as JavaScript counts).
    pub max_result_length: usize,
    /// The most characters of logs kept (UTF-16 code units); later lines are dropped, and a last
    /// line says so.
    pub max_log_length: usize,
}

/// What a run gives: the JSON the code returned (`null` for nothing) and what it logged.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    /// What the code returned, as JSON.
    pub result: Value,
    /// What the code logged with `console`, a line per call.
    pub logs: Vec<String>,
}

/// How a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodeFailure {
    /// The code threw (or could not be run): what it threw, and what it logged before.
    Error {
        /// The error, as the code would print it.
        message: String,
        /// What the code logged before it threw.
        logs: Vec<String>,
    },
    /// The run went past its deadline.
    Timeout {
        /// What the code logged before it was stopped.
        logs: Vec<String>,
    },
    /// The code returned more JSON than a model is given.
    ResultTooLarge {
        /// How many characters (UTF-16 code units) the result's JSON has.
        length: usize,
        /// What the code logged.
        logs: Vec<String>,
    },
}

impl fmt::Display for CodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Error { message, .. } => write!(f, "the code failed: {message}"),
            Self::Timeout { .. } => f.write_str("the code ran past its deadline"),
            Self::ResultTooLarge { length, .. } => {
                write!(
                    f,
                    "the code returned {length} characters of JSON, more than allowed"
                )
            }
        }
    }
}

impl std::error::Error for CodeFailure {}
