//! Progress of a long call, told to the host as it happens: [`Progress`].
//!
//! A host that wants to show how a call is coming along gives a callback with the call
//! ([`CallContext::progress`](crate::CallContext::progress)). It is told:
//!
//! - what an MCP server reports with `notifications/progress` while it runs a tool (the call asks
//!   for it with a `progressToken` when the host gave a callback, or when progress may keep the
//!   call alive past its timeout: `McpOptions::max_call_time`);
//! - each tool that the code of a code-mode run calls, when the call starts and when it ends.
//!
//! Progress is for the host and its person, never for the model: nothing here reaches a result.
//! A callback that wants a stream instead sends each event into a channel:
//!
//! ```
//! use toolkit_core::{CallContext, Progress};
//!
//! let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Progress>();
//! let context = CallContext::new().progress(move |event| {
//!     let _ = sender.send(event);
//! });
//! # let _ = (context, receiver.try_recv());
//! ```

// Without MCP or code mode, nothing reports progress yet; without MCP, nothing routes a
// progress token (`routes.rs`).

mod routes;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::text::cut_utf16;

/// Where the host is told of a call's progress.
#[doc(hidden)]
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

pub use routes::{Heard, Registration, Routes};

/// The most UTF-16 code units of a source's progress message passed on.
const MAX_MESSAGE_LENGTH: usize = 1_000;

/// One piece of progress of a call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Progress {
    /// A source said how far the call of one of its tools has come (an MCP server's
    /// `notifications/progress`).
    Reported {
        /// The tool being run, by the name the model knows it.
        tool: String,
        /// How far it has come (grows with each report), as the source wrote the number (an
        /// integer stays one; `as_f64` for arithmetic).
        progress: serde_json::Number,
        /// Where `progress` ends, when the source knows, as it wrote the number.
        total: Option<serde_json::Number>,
        /// What the source said, for a person (cut to 1,000 characters).
        message: Option<String>,
    },
    /// A source logged a message while it ran the tool (an MCP server's `notifications/message`
    /// on the call's own stream).
    Logged {
        /// The tool being run, by the name the model knows it.
        tool: String,
        /// The message's severity, as the source named it (`debug`, `info`… `emergency`).
        level: String,
        /// The logger that wrote it, when the source named one.
        logger: Option<String>,
        /// What was logged, as the source wrote it.
        data: Value,
    },
    /// Code of a code-mode run called one of its tools.
    CallStarted {
        /// The tool that runs the code (`execute`).
        tool: String,
        /// The tool the code called.
        called: String,
    },
    /// A tool that code of a code-mode run called has answered.
    CallEnded {
        /// The tool that runs the code (`execute`).
        tool: String,
        /// The tool the code called.
        called: String,
        /// The code of its failure (such as `InvalidInputError`), when it failed.
        failure: Option<String>,
        /// How long it took.
        duration: Duration,
    },
}

/// The log that the params of a `notifications/message` written while the tool `tool` ran say;
/// `None` for params that are no log message.
#[doc(hidden)]
pub fn logged(tool: &str, params: Option<&Value>) -> Option<Progress> {
    let params = params?.as_object()?;
    let level = params.get("level")?.as_str()?;
    let data = params.get("data")?;
    let logger = params
        .get("logger")
        .and_then(Value::as_str)
        .map(|logger| cut_utf16(logger, MAX_MESSAGE_LENGTH));
    Some(Progress::Logged {
        tool: tool.to_owned(),
        level: cut_utf16(level, 32),
        logger,
        data: data.clone(),
    })
}
