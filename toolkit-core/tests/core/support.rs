//! What the tests share: a source that records what reaches it and behaves as each tool says.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolkit_core::{BoxFuture, JsonObject, Reason, ToolDefinition, ToolSource, ToolSourceError};

/// `value` as a JSON object; panics in a test when it is not one.
pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("not an object: {other}"),
    }
}

/// A definition named `name` with `schema`.
pub fn definition(name: &str, schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, object(schema)).expect("a valid definition")
}

/// An open object schema.
pub fn any_object() -> Value {
    json!({ "type": "object" })
}

/// The address a scripted source's failures name, which no model may read.
pub const ADDRESS: &str = "https://10.1.2.3:8443/internal";

/// A source whose tools behave as their names say, and that counts what reaches it:
/// - `echo`: answers with its input;
/// - `nothing`: answers `null`;
/// - `fail`: fails with `CallFailed("the tool said no")`;
/// - `down`: fails as unavailable, naming [`ADDRESS`];
/// - `denied`: fails as refused credentials, naming [`ADDRESS`];
/// - `panic`: panics inside its future; `panic_now`: panics before giving a future;
/// - `block`: never answers, and sets [`Scripted::dropped`] when its future is dropped;
/// - anything else: not found.
#[derive(Debug, Default)]
pub struct Scripted {
    pub name: String,
    pub calls: AtomicUsize,
    pub discovers: AtomicUsize,
    pub started: AtomicBool,
    pub dropped: Arc<AtomicBool>,
    pub seen: std::sync::Mutex<Vec<(String, JsonObject)>>,
}

impl Scripted {
    pub fn new(name: &str) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            ..Self::default()
        })
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn contacts(&self) -> usize {
        self.calls() + self.discovers.load(Ordering::SeqCst)
    }

    /// The definitions of every scripted tool, with open schemas.
    pub fn definitions() -> Vec<ToolDefinition> {
        [
            "echo",
            "nothing",
            "fail",
            "down",
            "denied",
            "panic",
            "panic_now",
            "block",
        ]
        .into_iter()
        .map(|name| definition(name, any_object()))
        .collect()
    }
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl ToolSource for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        self.discovers.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(Self::definitions()) })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        _context: &'a toolkit_core::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen
            .lock()
            .expect("not poisoned")
            .push((tool.to_owned(), input.clone()));
        if tool == "panic_now" {
            panic!("the source broke before it started");
        }
        let error = |reason| Err(ToolSourceError::new(&self.name, reason));
        Box::pin(async move {
            match tool {
                "echo" => Ok(Value::Object(input)),
                "nothing" => Ok(Value::Null),
                "fail" => error(Reason::call_failed("the tool said no")),
                "down" => error(Reason::unavailable(format!("{ADDRESS} answered 503"))),
                "denied" => error(Reason::authentication(format!("{ADDRESS} answered 401"))),
                "panic" => panic!("the source broke"),
                "block" => {
                    let _guard = SetOnDrop(Arc::clone(&self.dropped));
                    self.started.store(true, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                    Ok(Value::Null)
                }
                other => error(Reason::not_found(format!("no tool {other} at {ADDRESS}"))),
            }
        })
    }
}
