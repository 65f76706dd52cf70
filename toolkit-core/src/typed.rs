//! Calls with a typed input: [`call_typed`], what each method of a generated source is, and
//! [`call_answered`], the same with a typed answer.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{CallContext, Reason, ToolSource, ToolSourceError};

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
/// use toolkit_core::{FnSource, FnTool, call_typed};
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
        Ok(Value::Object(input)) => source.call(tool, input, &CallContext::new()).await,
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

/// [`call_typed`], with the answer read as `A`: what each method of a generated source whose
/// tool declares its answer's schema is (`petstore.get_pet_by_id(..)` → `Pet`).
///
/// The answer's JSON is read as `A` (generated answer types are lenient: properties they do not
/// name are ignored, a string enum keeps a value it does not list). An answer that does not fit
/// `A` is no panic and no default: it fails as [`Reason::InvalidResponse`] naming the JSON path
/// where it does not fit (`.items[2].status: invalid type: integer `3`, expected a string`),
/// never the source's address. The untyped answer is one [`ToolSource::call`] away.
///
/// # Errors
///
/// As [`call_typed`]; [`Reason::InvalidResponse`] for an answer that does not fit `A`.
///
/// # Examples
///
/// ```
/// use serde::Serialize;
/// use serde_json::json;
/// use toolkit_core::{FnSource, FnTool, call_answered};
///
/// #[derive(Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Find { id: u32 }
///
/// #[derive(Debug, serde::Deserialize)]
/// struct Pet { name: String }
///
/// let source = FnSource::builder("pets")
///     .tool(FnTool::new("find", |input: Find| async move {
///         Ok(if input.id == 1 { json!({"name": "Rex"}) } else { json!({"name": 7}) })
///     }))
///     .build()?;
/// # let runtime = tokio::runtime::Builder::new_current_thread().build()?;
/// let pet: Pet = runtime.block_on(call_answered(&source, "find", &Find { id: 1 }))?;
/// assert_eq!(pet.name, "Rex");
/// let error = runtime.block_on(call_answered::<_, _, Pet>(&source, "find", &Find { id: 2 })).unwrap_err();
/// assert!(error.to_string().contains("at name: invalid type: integer `7`, expected a string"), "{error}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn call_answered<S, I, A>(source: &S, tool: &str, input: &I) -> Result<A, ToolSourceError>
where
    S: ToolSource + ?Sized,
    I: Serialize + ?Sized,
    A: DeserializeOwned,
{
    let answer = call_typed(source, tool, input).await?;
    serde_path_to_error::deserialize(answer).map_err(|error| {
        let path = error.path().to_string();
        let at = if path == "." {
            "the root".to_owned()
        } else {
            path
        };
        ToolSourceError::new(
            source.name(),
            Reason::invalid_response(format!(
                "the answer of {tool:?} does not fit its type at {at}: {}",
                error.inner()
            )),
        )
    })
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
