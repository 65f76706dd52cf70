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
// progress token (the second half of this file).

use std::collections::HashMap;
use std::hash::BuildHasher as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;

use crate::text::cut_utf16;

/// Where the host is told of a call's progress.
#[doc(hidden)]
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

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

/// What is told of each report on a call's progress, whoever else is (an MCP source that lets
/// a call live on while its server reports).
#[doc(hidden)]
pub type Heard = Arc<dyn Fn() + Send + Sync>;

/// Where the progress of a call with a token goes: the host's callback (if it asked), the tool's
/// name, and what is told of each report.
struct Route {
    sink: Option<ProgressSink>,
    tool: String,
    heard: Option<Heard>,
}

/// The calls waiting for progress, by token. A token is unguessable (a random key of this
/// process, then a count), so one server cannot report on another's call.
static ROUTES: LazyLock<Mutex<HashMap<String, Route>>> = LazyLock::new(Mutex::default);
static NEXT: AtomicU64 = AtomicU64::new(0);
static KEY: LazyLock<u64> = LazyLock::new(|| foldhash::fast::RandomState::default().hash_one(0u8));

/// A call's progress token, routed to its host while this lives.
#[derive(Debug)]
#[doc(hidden)]
pub struct Registration {
    token: String,
}

impl Registration {
    /// A token for a call of the tool `tool`, when its host asked for progress (`sink`) or
    /// `heard` wants to be told of each report.
    #[doc(hidden)]
    pub fn new(sink: Option<ProgressSink>, tool: &str, heard: Option<Heard>) -> Option<Self> {
        if sink.is_none() && heard.is_none() {
            return None;
        }
        let token = format!(
            "toolkit-{:016x}-{}",
            *KEY,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let route = Route {
            sink,
            tool: tool.to_owned(),
            heard,
        };
        routes().insert(token.clone(), route);
        Some(Self { token })
    }

    /// The token to send as `_meta.progressToken`.
    #[doc(hidden)]
    pub fn token(&self) -> &str {
        &self.token
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        routes().remove(&self.token);
    }
}

fn routes() -> std::sync::MutexGuard<'static, HashMap<String, Route>> {
    ROUTES.lock().unwrap_or_else(PoisonError::into_inner)
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

/// Passes on the params of a `notifications/progress` to the call whose token they name; a
/// token of no call in flight, or params that are not progress, are let go.
#[doc(hidden)]
pub fn deliver(params: Option<&Value>) {
    let Some(params) = params.and_then(Value::as_object) else {
        return;
    };
    let Some(token) = params.get("progressToken").and_then(Value::as_str) else {
        return;
    };
    // The numbers as written: a JSON number is finite, and an integer stays one.
    let number = |key: &str| match params.get(key) {
        Some(Value::Number(number)) => Some(number.clone()),
        _ => None,
    };
    let Some(progress) = number("progress") else {
        return;
    };
    let total = number("total");
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .map(|message| cut_utf16(message, MAX_MESSAGE_LENGTH));
    // The callbacks run outside the lock: one may start another call.
    let Some((sink, tool, heard)) = routes()
        .get(token)
        .map(|route| (route.sink.clone(), route.tool.clone(), route.heard.clone()))
    else {
        return;
    };
    if let Some(heard) = heard {
        heard();
    }
    if let Some(sink) = sink {
        sink(Progress::Reported {
            tool,
            progress,
            total,
            message,
        });
    }
}
