//! Hand-written tools: an input type and an async function, as a [`ToolSource`].
//!
//! The input type derives `Deserialize` and `schemars::JsonSchema`; its JSON Schema is the tool's
//! `inputSchema`. Add `#[serde(deny_unknown_fields)]` to close it, so that a model's call with a
//! property the type does not name is refused before the function runs, with a report naming the
//! properties it takes.
//!
//! ```
//! use std::sync::Arc;
//! use serde::Deserialize;
//! use schemars::JsonSchema;
//! use toolkit_core::{FnSource, FnTool, Reason, Toolkit, ToolkitOptions};
//!
//! /// Adds two numbers.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Add {
//!     /// The first number.
//!     a: f64,
//!     /// The second number.
//!     b: f64,
//! }
//!
//! let math = FnSource::builder("math")
//!     .tool(
//!         FnTool::new("add", |input: Add| async move { Ok(input.a + input.b) })
//!             .description("Adds two numbers.")
//!             .read_only(),
//!     )
//!     .build()?;
//! let definitions = math.definitions();
//! let toolkit = Toolkit::from_source(Arc::new(math), definitions, &ToolkitOptions::default())?;
//! # let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! let sum = runtime.block_on(toolkit.call("add", serde_json::json!({ "a": 1, "b": 2 })));
//! assert_eq!(sum, Ok(serde_json::json!(3.0)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::text::cut_utf16;
use crate::{
    Annotations, BoxFuture, CallContext, DefinitionError, JsonObject, Reason, ToolDefinition,
    ToolSource, ToolSourceError,
};

type Run = Arc<dyn Fn(JsonObject) -> BoxFuture<'static, Result<Value, Reason>> + Send + Sync>;

/// One hand-written tool: a name, an async function of a typed input, and what the model is told.
pub struct FnTool {
    name: String,
    description: Option<String>,
    annotations: Annotations,
    input_schema: JsonObject,
    run: Run,
}

impl FnTool {
    /// The tool `name`, which runs `function` with the model's input read as `I`. The function
    /// gives what the model reads (any `Serialize`), or a [`Reason`] — usually
    /// [`Reason::call_failed`] with words for the model.
    pub fn new<I, O, F, Fut>(name: impl Into<String>, function: F) -> Self
    where
        I: DeserializeOwned + JsonSchema,
        O: Serialize,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, Reason>> + Send + 'static,
    {
        let function = Arc::new(function);
        let run: Run = Arc::new(move |input: JsonObject| {
            let function = Arc::clone(&function);
            Box::pin(async move {
                let input: I = serde_json::from_value(Value::Object(input)).map_err(|error| {
                    Reason::invalid_input(cut_utf16(
                        &format!("The input cannot be read: {error}"),
                        2000,
                    ))
                })?;
                let output = function(input).await?;
                serde_json::to_value(output).map_err(|error| {
                    Reason::invalid_response(format!("the tool's answer is not JSON: {error}"))
                })
            })
        });
        Self {
            name: name.into(),
            description: None,
            annotations: Annotations::default(),
            input_schema: input_schema_of::<I>(),
            run,
        }
    }

    /// What the tool does, written for the model.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The tool's hints, replacing any set before.
    #[must_use]
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Marks the tool read-only: it changes nothing.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.annotations.read_only = Some(true);
        self
    }
}

impl fmt::Debug for FnTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

/// The JSON Schema of `I`, as a tool's `inputSchema`: draft 2020-12, without `$schema` and the
/// type's `title`, which a model need not read.
fn input_schema_of<I: JsonSchema>() -> JsonObject {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<I>();
    let mut object = match schema.to_value() {
        Value::Object(object) => object,
        // `true` (anything) or `false` (nothing) as an object schema.
        Value::Bool(true) => JsonObject::new(),
        _ => serde_json::json!({ "not": {} })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    object.remove("$schema");
    object.remove("title");
    object
        .entry("type")
        .or_insert_with(|| Value::String("object".to_owned()));
    object
}

/// A source of hand-written tools, built with [`FnSource::builder`].
pub struct FnSource {
    name: String,
    tools: IndexMap<String, (ToolDefinition, Run)>,
}

impl FnSource {
    /// A builder of the source named `name`.
    pub fn builder(name: impl Into<String>) -> FnSourceBuilder {
        FnSourceBuilder {
            name: name.into(),
            tools: Vec::new(),
        }
    }

    /// The definitions of the tools, in the order they were added: what `discover` gives, without
    /// a future.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .map(|(definition, _)| definition.clone())
            .collect()
    }
}

impl fmt::Debug for FnSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnSource")
            .field("name", &self.name)
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ToolSource for FnSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        let definitions = self.definitions();
        Box::pin(async move { Ok(definitions) })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        _context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        let Some((_, run)) = self.tools.get(tool) else {
            let error = ToolSourceError::new(
                &self.name,
                Reason::not_found(format!("no tool named {tool:?}")),
            );
            return Box::pin(async move { Err(error) });
        };
        let future = run(input);
        Box::pin(async move {
            future
                .await
                .map_err(|reason| ToolSourceError::new(&self.name, reason))
        })
    }
}

/// Collects the tools of an [`FnSource`]; [`FnSourceBuilder::build`] checks their names.
#[derive(Debug)]
pub struct FnSourceBuilder {
    name: String,
    tools: Vec<FnTool>,
}

impl FnSourceBuilder {
    /// Adds `tool` (calls accumulate, in order).
    #[must_use]
    pub fn tool(mut self, tool: FnTool) -> Self {
        self.tools.push(tool);
        self
    }

    /// The source.
    ///
    /// # Errors
    ///
    /// [`FnSourceError`] when a tool's name is empty or two tools share one.
    pub fn build(self) -> Result<FnSource, FnSourceError> {
        let mut tools = IndexMap::with_capacity(self.tools.len());
        for tool in self.tools {
            let definition = ToolDefinition::new(tool.name.clone(), tool.input_schema)
                .map_err(FnSourceError::Definition)?
                .with_annotations(tool.annotations);
            let definition = match tool.description {
                Some(description) => definition.with_description(description),
                None => definition,
            };
            if tools
                .insert(tool.name.clone(), (definition, tool.run))
                .is_some()
            {
                return Err(FnSourceError::DuplicateName(tool.name));
            }
        }
        Ok(FnSource {
            name: self.name,
            tools,
        })
    }
}

/// Why an [`FnSource`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FnSourceError {
    /// A tool is no valid definition (its name is empty).
    Definition(DefinitionError),
    /// Two tools share this name.
    DuplicateName(String),
}

impl fmt::Display for FnSourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Definition(error) => error.fmt(f),
            Self::DuplicateName(name) => write!(f, "two tools are named {name:?}"),
        }
    }
}

impl std::error::Error for FnSourceError {}
