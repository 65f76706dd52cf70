//! Calls with a typed input: [`call_typed`], what each method of a generated source is.

use serde::Serialize;
use serde_json::Value;

use crate::{Reason, ToolSource, ToolSourceError};

/// Runs the tool `tool` of `source` with `input` serialised to a JSON object: the one line of
/// each typed method `toolkit-gen` writes (`petstore.list_pets(ListPetsInput { .. })`), so that
/// what a call does is the source's, never generated logic.
///
/// # Errors
///
/// What [`ToolSource::call`] fails with; [`Reason::InvalidInput`] when `input` does not serialise
/// to a JSON object.
///
/// # Examples
///
/// ```
/// use serde::Serialize;
/// use toolkit_runtime::{FnSource, FnTool, call_typed};
///
/// #[derive(Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Greet { name: String }
///
/// let source = FnSource::builder("hello")
///     .tool(FnTool::new("greet", |input: Greet| async move { Ok(format!("Hello, {}!", input.name)) }))
///     .build()?;
/// # let runtime = tokio::runtime::Builder::new_current_thread().build()?;
/// let answer = runtime.block_on(call_typed(&source, "greet", &Greet { name: "Ada".into() }))?;
/// assert_eq!(answer, "Hello, Ada!");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn call_typed<S, I>(source: &S, tool: &str, input: &I) -> Result<Value, ToolSourceError>
where
    S: ToolSource + ?Sized,
    I: Serialize + ?Sized,
{
    match serde_json::to_value(input) {
        Ok(Value::Object(input)) => source.call(tool, input).await,
        Ok(other) => Err(ToolSourceError::new(
            source.name(),
            Reason::invalid_input(format!(
                "the input of {tool:?} is no JSON object but {}",
                kind(&other)
            )),
        )),
        Err(error) => Err(ToolSourceError::new(
            source.name(),
            Reason::invalid_input(format!("the input of {tool:?} does not serialise: {error}")),
        )),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
