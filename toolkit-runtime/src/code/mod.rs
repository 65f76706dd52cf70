//! Presenting a toolkit as code: [`CodeMode`].
//!
//! The model is given one tool, `execute({ code })`, whose description declares the presented
//! tools as TypeScript. The code is the body of an async JavaScript function: it calls a tool as
//! `await tools.<name>(input)`, notes what it wants to see with `console.log`, and returns JSON. A
//! model does in one run what takes many calls otherwise, and only what the code returns (and
//! logs) comes back to it.
//!
//! A tool is called from code as a model calls it directly: its input is checked, and a failure is
//! an error the code can catch (its `message`, `code` and `retryable`). The run gives back
//! `{ result, logs }`; it fails as a result the model reads with `CodeError` (and the logs so far)
//! when the code throws, `Timeout` past the timeout (one minute by default; tool calls count in),
//! and `ResultTooLarge` past `max_result_length` (50,000 characters by default). Results and logs
//! are measured in characters as JavaScript's `length` counts them (UTF-16 code units).
//!
//! A tool that needs approval — always, or for some inputs — cannot be called from code, since a
//! person cannot be asked in the middle of a run: it stays a tool of its own beside `execute`.
//!
//! Declaring every tool costs as many tokens as listing them. For a large toolkit
//! ([`Declarations::Auto`] past [`EVERY_DECLARATION_LIMIT`] characters of declarations, or
//! [`Declarations::Search`]) `execute`'s description names no tool, and a second tool,
//! `search_tools({ query?, names?, limit? })`, gives the TypeScript declarations of the tools a
//! query finds or the model names; `execute` may call any callable tool, found or not.
//!
//! Runtimes: [`QuickJs`] in process; [`WorkerIsolate`], a worker process per run, killed at the
//! deadline; [`WorkerPool`], those workers started ahead.
//!
//! ```
//! # let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! # runtime.block_on(async {
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolkit_runtime::{code::CodeMode, code::CodeModeOptions, code::QuickJs, Toolkit};
//!
//! let presented = Toolkit::default(); // an assembled toolkit
//! let toolkit = CodeMode::toolkit(&presented, Arc::new(QuickJs::default()), &CodeModeOptions::default());
//! let run = toolkit
//!     .call("execute", json!({ "code": "console.log('hi'); return [1, 2].map(x => x * 2);" }))
//!     .await;
//! assert_eq!(run, Ok(json!({ "result": [2, 4], "logs": ["hi"] })));
//! # });
//! # Ok::<(), std::io::Error>(())
//! ```

mod carried;
mod declarations;
mod discovery;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use declarations::declare_tools;
pub use discovery::{Declarations, EVERY_DECLARATION_LIMIT};
pub use toolkit_code::{
    CodeFailure, CodeRuntime, PoolOptions, QuickJs, QuickJsOptions, RunLimits, RunOutput, ToolCall,
    WorkerInput, WorkerIsolate, WorkerOutput, WorkerPool, serve_worker, serve_worker_on,
    worker_stdio,
};

use tracing::Instrument as _;

use carried::Carried;
use discovery::{Catalog, declares_every_tool};
use toolkit_core::Approval;
use toolkit_core::text::{cut_utf16, utf16_length};
use toolkit_core::{CallContext, Failure, JsonObject, Tool, ToolDefinition, Toolkit};

/// The most characters of an error or of logs that a failed run's message carries.
const MAX_FAILURE_TEXT: usize = 2_000;

/// Options of [`CodeMode::toolkit`], set one by one from the defaults.
///
/// ```
/// use std::time::Duration;
/// use toolkit_runtime::{code::CodeModeOptions, code::Declarations};
///
/// let options = CodeModeOptions::default()
///     .timeout(Duration::from_secs(10))
///     .declarations(Declarations::Search);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CodeModeOptions {
    timeout: Duration,
    max_result_length: usize,
    max_log_length: usize,
    declarations: Declarations,
    #[cfg(feature = "search-embeddings")]
    meaning: Option<crate::search::MeaningModel>,
}

impl CodeModeOptions {
    /// How long a run may take, its tool calls counted in (one minute by default).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest result, in characters of JSON as JavaScript counts them (UTF-16 code units;
    /// 50,000 by default).
    #[must_use]
    pub fn max_result_length(mut self, length: usize) -> Self {
        self.max_result_length = length;
        self
    }

    /// The most characters of logs kept, as JavaScript counts them (50,000 by default).
    #[must_use]
    pub fn max_log_length(mut self, length: usize) -> Self {
        self.max_log_length = length;
        self
    }

    /// How the model learns the tools: all declared in `execute`, or found with `search_tools`
    /// ([`Declarations::Auto`] by default: by the size of the declarations).
    #[must_use]
    pub fn declarations(mut self, declarations: Declarations) -> Self {
        self.declarations = declarations;
        self
    }

    /// A model of meaning (feature `search-embeddings`): with one, `search_tools` ranks by
    /// words and meaning ([`SearchIndex::hybrid`](crate::search::SearchIndex::hybrid)); with none (the
    /// default), by words.
    #[cfg(feature = "search-embeddings")]
    #[must_use]
    pub fn meaning(mut self, meaning: Option<crate::search::MeaningModel>) -> Self {
        self.meaning = meaning;
        self
    }
}

impl Default for CodeModeOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            max_result_length: 50_000,
            max_log_length: 50_000,
            declarations: Declarations::Auto,
            #[cfg(feature = "search-embeddings")]
            meaning: None,
        }
    }
}

/// Presents a toolkit as `execute` (and, beside it, the tools that need approval).
#[derive(Clone, Copy, Debug)]
pub struct CodeMode;

impl CodeMode {
    /// The toolkit of `execute` over `presented`, run by `runtime`, followed by the presented
    /// tools that need approval, as they are.
    pub fn toolkit(
        presented: &Toolkit,
        runtime: Arc<dyn CodeRuntime>,
        options: &CodeModeOptions,
    ) -> Toolkit {
        let callable = Arc::new(presented.restrict(|tool| !tool.approval().may_be_required()));
        let own = presented.restrict(|tool| tool.approval().may_be_required());
        let names: Arc<[String]> = callable
            .tools()
            .map(|tool| tool.name().to_owned())
            .collect();
        let every = declare_tools(callable.tools());
        let searched = !declares_every_tool(options.declarations, &every);
        let definition = if searched {
            execute_definition(discovery::execute_description(&callable))
        } else {
            execute_definition(every_tool_description(&every))
        };
        let search = searched.then(|| {
            let index = crate::search::index(
                &callable,
                crate::search::Ranking::default(),
                #[cfg(feature = "search-embeddings")]
                options.meaning.as_ref(),
            );
            discovery::search_tool(Arc::new(Catalog::new(&callable, index)))
        });
        let options = options.clone();
        let execute = Tool::new(
            definition,
            Approval::Never,
            Arc::new(move |mut input: JsonObject, context: CallContext| {
                let (runtime, callable, names, options) = (
                    Arc::clone(&runtime),
                    Arc::clone(&callable),
                    Arc::clone(&names),
                    options.clone(),
                );
                Box::pin(async move {
                    let code = match input.remove("code") {
                        Some(Value::String(code)) => code,
                        _ => return Err(Failure::invalid_input("Give the code to run.")),
                    };
                    let span = crate::telemetry::code_run();
                    let run = execute(&*runtime, &code, callable, &names, &options, &context);
                    run.instrument(span).await
                })
            }),
        );
        // `execute` is no name of a presented tool that needs approval unless the host made one;
        // then the presented tool is the one kept.
        let tools = std::iter::once(execute)
            .chain(search)
            .chain(own.tools().cloned());
        Toolkit::from_tools(tools).unwrap_or(own)
    }
}

async fn execute(
    runtime: &dyn CodeRuntime,
    code: &str,
    callable: Arc<Toolkit>,
    names: &[String],
    options: &CodeModeOptions,
    context: &CallContext,
) -> Result<Value, Failure> {
    // The code's calls run on the isolate's thread: each is carried into this run's context (the
    // host's progress callback) and span.
    let carried = Carried::new(context);
    let carrier = carried.clone();
    let call: ToolCall = Arc::new(move |name: String, input: Value| {
        carrier.call(Arc::clone(&callable), name, input)
    });
    let limits = RunLimits {
        deadline: Instant::now() + options.timeout,
        max_result_length: options.max_result_length,
        max_log_length: options.max_log_length,
    };
    let run = runtime.run(code, names, call, limits);
    let outcome = match tokio::time::timeout(options.timeout, run).await {
        Ok(outcome) => outcome,
        Err(_) => Err(CodeFailure::Timeout { logs: Vec::new() }),
    };
    let span = tracing::Span::current();
    span.record("toolkit.tool_calls", carried.calls());
    crate::telemetry::record_end(
        &span,
        match &outcome {
            Ok(_) => None,
            Err(CodeFailure::Error { .. }) => Some("CodeError"),
            Err(CodeFailure::Timeout { .. }) => Some("Timeout"),
            Err(CodeFailure::ResultTooLarge { .. }) => Some("ResultTooLarge"),
            // A kind of failure a later isolate crate adds.
            Err(_) => Some("CodeError"),
        },
    );
    match outcome {
        Ok(output) => {
            let length = utf16_length(&output.result.to_string());
            if length > options.max_result_length {
                return Err(too_large(length, options.max_result_length));
            }
            Ok(json!({ "result": output.result, "logs": output.logs }))
        }
        Err(CodeFailure::Error { message, logs }) => Err(Failure::new(
            "CodeError",
            with_logs(
                format!("The code threw: {}", cut_utf16(&message, MAX_FAILURE_TEXT)),
                &logs,
            ),
            false,
        )),
        Err(CodeFailure::Timeout { logs }) => Err(Failure::new(
            "Timeout",
            with_logs(
                format!(
                    "The code ran longer than {} s, its tool calls counted in. Do less in one run.",
                    options.timeout.as_secs_f64()
                ),
                &logs,
            ),
            true,
        )),
        Err(CodeFailure::ResultTooLarge { length, .. }) => {
            Err(too_large(length, options.max_result_length))
        }
        Err(other) => Err(Failure::new(
            "CodeError",
            format!("The code could not run: {other}"),
            false,
        )),
    }
}

fn too_large(length: usize, max: usize) -> Failure {
    Failure::new(
        "ResultTooLarge",
        format!(
            "The code returned {length} characters of JSON, more than {max}. Return less: filter or \
             summarise in the code."
        ),
        false,
    )
}

fn with_logs(message: String, logs: &[String]) -> String {
    if logs.is_empty() {
        return message;
    }
    let logs = cut_utf16(&logs.join("\n"), MAX_FAILURE_TEXT);
    format!("{message}\nWhat the code logged before:\n{logs}")
}

fn every_tool_description(every: &str) -> String {
    format!(
        "Runs JavaScript (not TypeScript: type annotations are a syntax error) as the body of an \
         async function, and gives back {{ result, logs }}: what the code returns, as JSON, and \
         what it logged with console.log. Call a tool as `await tools.<name>(input)`; a tool that \
         fails throws an Error with its message, code and retryable. Use one run to call several \
         tools, read their results in code, and return only what is needed. Nothing else is \
         reachable: no fetch, require, timers or modules.\n\nThe tools:\n\n{every}"
    )
}

fn execute_definition(description: String) -> ToolDefinition {
    let schema = json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "The body of an async JavaScript function; `return` gives the result."
            }
        },
        "required": ["code"],
        "additionalProperties": false
    });
    let schema = match schema {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    ToolDefinition::builtin("execute", &description, schema)
}
