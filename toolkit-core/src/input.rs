//! Checking a model's input against a tool's JSON Schema, and the strict-input report.
//!
//! The input must be an object that matches the schema; a schema that closes an object (with
//! `additionalProperties: false` or `unevaluatedProperties: false`) refuses any property it does
//! not name. `pattern` and `format` are not checked: the source checks them too, and a pattern
//! from a source is not run here. A schema that cannot be compiled into a check (an external
//! `$ref`, an unknown draft, a malformed keyword) holds the input only to being an object.
//!
//! An input that fails names every problem at once, with its JSON path, and for each object level
//! that carries an unknown key the keys that level accepts, so a model can fix its call from the
//! reply alone:
//!
//! ```text
//! Invalid parameters for tool 'search':
//! - unknown property "extra" at the root
//! - missing required property "query" at the root
//! - unknown property "text" at /filter
//! Accepted params at the root: query, filter.
//! Accepted params at /filter: kind, tag.
//! ```

use std::fmt::{self, Write as _};

use serde_json::Value;

use crate::JsonObject;

#[cfg(feature = "input-checks")]
mod compiled;

#[cfg(feature = "input-checks")]
use compiled::Compiled;
#[cfg(feature = "input-checks")]
#[doc(hidden)]
pub use compiled::compile;

/// Without feature `input-checks` no schema compiles into a check: every input is held only to
/// being an object no deeper than [`MAX_INPUT_DEPTH`].
#[cfg(not(feature = "input-checks"))]
#[derive(Debug)]
enum Compiled {}

#[cfg(not(feature = "input-checks"))]
impl Compiled {
    fn new(_: &JsonObject) -> Option<Self> {
        // Said once per process, where a host would look: a build that calls tools without the
        // feature is one that meant to keep it.
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            tracing::warn!(
                "toolkit-core was built without its feature `input-checks`: inputs are held only to being JSON objects, not to their tools' schemas"
            );
        });
        None
    }

    fn is_valid(&self, _: &Value) -> bool {
        match *self {}
    }

    fn report(&self, _: &Value) -> InvalidInput {
        match *self {}
    }
}

/// The deepest input accepted, in nested arrays and objects: the depth `serde_json` reads by
/// default, so an input that came from JSON text is never refused for it.
pub const MAX_INPUT_DEPTH: usize = 128;

/// The check of one tool's input, compiled once from its schema.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::InputCheck;
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "query": { "type": "string" } },
///     "required": ["query"],
///     "additionalProperties": false
/// });
/// let check = InputCheck::new(schema.as_object().unwrap());
/// assert!(check.check(&json!({ "query": "pets" })).is_ok());
///
/// let report = check.check(&json!({ "q": "pets" })).unwrap_err();
/// assert!(report.to_string().contains("Accepted params at the root: query."));
/// ```
#[derive(Debug)]
pub struct InputCheck {
    /// `None` when the schema could not be compiled: the input is then held only to being an
    /// object.
    compiled: Option<Compiled>,
}

impl InputCheck {
    /// Compiles the check of `schema`. Never fails: a schema that cannot be compiled (or any,
    /// without feature `input-checks`) checks only that the input is an object.
    pub fn new(schema: &JsonObject) -> Self {
        Self {
            compiled: Compiled::new(schema),
        }
    }

    /// Whether the schema compiled into a full check (else only an object is required).
    pub fn is_complete(&self) -> bool {
        self.compiled.is_some()
    }

    /// Checks `input`, returning every problem at once when it is not accepted.
    ///
    /// # Errors
    ///
    /// [`InvalidInput`] naming each problem.
    pub fn check(&self, input: &Value) -> Result<(), InvalidInput> {
        if !input.is_object() {
            return Err(InvalidInput::single(format!(
                "the input must be a JSON object, not {}",
                kind_of(input)
            )));
        }
        if depth_exceeds(input, MAX_INPUT_DEPTH) {
            return Err(InvalidInput::single(format!(
                "the input is nested deeper than {MAX_INPUT_DEPTH} levels"
            )));
        }
        let Some(compiled) = &self.compiled else {
            return Ok(());
        };
        if compiled.is_valid(input) {
            return Ok(());
        }
        Err(compiled.report(input))
    }
}

/// An input that a tool does not take: every problem, and what each object level with an unknown
/// key accepts. Its `Display` is the report a model reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidInput {
    problems: Vec<String>,
    accepted: Vec<String>,
}

impl InvalidInput {
    fn single(problem: String) -> Self {
        Self {
            problems: vec![problem],
            accepted: Vec::new(),
        }
    }

    /// Each problem, with its JSON path.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The `Accepted params at …` lines, one per object level that carries an unknown key.
    pub fn accepted(&self) -> &[String] {
        &self.accepted
    }

    /// The report for the tool `tool`, as a model reads it.
    pub fn report(&self, tool: &str) -> String {
        format!("Invalid parameters for tool '{tool}':\n{self}")
    }
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for problem in &self.problems {
            if !first {
                f.write_char('\n')?;
            }
            first = false;
            write!(f, "- {problem}")?;
        }
        for line in &self.accepted {
            write!(f, "\n{line}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InvalidInput {}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether `value` nests arrays and objects deeper than `limit`, found without recursion.
fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth >= limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}
