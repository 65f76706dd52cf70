//! A tool as storable data: [`ToolDefinition`] and its [`Annotations`].
//!
//! A definition is what a model is told about a tool, in the form a catalog stores as JSON and a
//! source reports before anything runs the tool. Its JSON form is the catalog format:
//!
//! ```json
//! {
//!   "name": "list_pets",
//!   "description": "Lists the pets of the store.",
//!   "inputSchema": { "type": "object", "properties": { "limit": { "type": "integer" } } },
//!   "annotations": { "readOnly": true }
//! }
//! ```
//!
//! A definition may carry an `outputSchema` (a JSON Schema object, as an MCP server lists it):
//! what the tool's structured answer looks like. It is kept, stored and served as it came;
//! nothing checks an answer against it.
//!
//! What else an MCP server lists of a tool is kept where the server put it, so that a server that
//! serves the tool again (the gateway) lists what its upstream listed: a top-level `title`
//! ([`ToolDefinition::title`], apart from `annotations.title`), `execution` (`taskSupport`),
//! `icons` and `_meta`, each as the JSON it came as.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object, as a tool's input and a tool's input schema are.
pub type JsonObject = Map<String, Value>;

/// A tool as data: its name, what it does, its parameters as JSON Schema, and its source's hints.
///
/// A source reports these from [`ToolSource::discover`](crate::ToolSource::discover), a catalog
/// stores them as JSON ([`decode_catalog`], [`encode_catalog`]), and
/// [`Toolkit::from_source`](crate::Toolkit::from_source) and [`Assembly`](crate::Assembly) build
/// from them the tools a model calls.
///
/// The name is never empty and the input schema is always a JSON object: decoding refuses
/// anything else, and [`ToolDefinition::new`] takes a [`JsonObject`].
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{Annotations, ToolDefinition};
///
/// let definition: ToolDefinition = serde_json::from_value(json!({
///     "name": "list_pets",
///     "inputSchema": { "type": "object" },
///     "annotations": { "readOnly": true }
/// }))?;
/// assert_eq!(definition.name(), "list_pets");
/// assert!(definition.annotations.hints().read_only);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawDefinition", rename_all = "camelCase")]
pub struct ToolDefinition {
    name: String,
    /// A name for people, where the source put it beside the name (MCP's top-level `title`;
    /// a title among the hints is [`Annotations::title`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, written for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    input_schema: Arc<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<Arc<JsonObject>>,
    /// The source's hints about what the tool does.
    pub annotations: Annotations,
    #[serde(skip_serializing_if = "Option::is_none")]
    execution: Option<Arc<JsonObject>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icons: Option<Arc<Vec<Value>>>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Arc<JsonObject>>,
}

impl ToolDefinition {
    /// A definition of the tool `name` with the input schema `input_schema`, no description and
    /// no hints.
    ///
    /// # Errors
    ///
    /// [`DefinitionError::EmptyName`] when `name` is empty.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Result<Self, DefinitionError> {
        let name = name.into();
        if name.is_empty() {
            return Err(DefinitionError::EmptyName);
        }
        Ok(Self::new_unchecked(name, input_schema))
    }

    /// This definition with `output_schema`: the JSON Schema of the tool's structured answer.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_core::ToolDefinition;
    ///
    /// let schema = json!({"type": "object", "properties": {"temperature": {"type": "number"}}});
    /// let definition = ToolDefinition::new("get_weather", Default::default())?
    ///     .with_output_schema(schema.as_object().cloned().unwrap_or_default());
    /// assert_eq!(serde_json::to_value(&definition)?["outputSchema"], schema);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_output_schema(mut self, output_schema: JsonObject) -> Self {
        self.output_schema = Some(Arc::new(output_schema));
        self
    }

    /// This definition without an output schema (a host that serves the tool's answers as they
    /// come, whatever their shape).
    #[must_use]
    pub fn without_output_schema(mut self) -> Self {
        self.output_schema = None;
        self
    }

    /// This definition with `title`, a name for people beside the name (MCP's top-level
    /// `title`).
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This definition with MCP's `execution` object (how the tool may run: `taskSupport`).
    #[must_use]
    pub fn with_execution(mut self, execution: JsonObject) -> Self {
        self.execution = Some(Arc::new(execution));
        self
    }

    /// This definition with MCP's `icons`, each as its source wrote it.
    #[must_use]
    pub fn with_icons(mut self, icons: Vec<Value>) -> Self {
        self.icons = Some(Arc::new(icons));
        self
    }

    /// This definition with MCP's `_meta` of the tool, as its source wrote it.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(Arc::new(meta));
        self
    }

    /// This definition with `description`.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// This definition with `annotations`.
    #[must_use]
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The tool's name, as its source knows it. Never empty.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's parameters: a JSON Schema whose root is an object.
    pub fn input_schema(&self) -> &JsonObject {
        &self.input_schema
    }

    /// The tool's parameters, shared: cloning a definition never copies its schema.
    pub fn shared_input_schema(&self) -> &Arc<JsonObject> {
        &self.input_schema
    }

    /// The JSON Schema of the tool's structured answer, when its source gave one.
    pub fn output_schema(&self) -> Option<&JsonObject> {
        self.output_schema.as_deref()
    }

    /// The output schema, shared: cloning a definition never copies it.
    pub fn shared_output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.output_schema.as_ref()
    }

    /// How the tool may run (MCP's `execution`, e.g. `{"taskSupport": "optional"}`), when its
    /// source said.
    pub fn execution(&self) -> Option<&JsonObject> {
        self.execution.as_deref()
    }

    /// The tool's icons (MCP's `icons`), as its source wrote them, when it gave any.
    pub fn icons(&self) -> Option<&[Value]> {
        self.icons.as_deref().map(Vec::as_slice)
    }

    /// The tool's `_meta` (MCP's), as its source wrote it, when it gave one.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.meta.as_deref()
    }

    /// The input schema and the output schema, to change (each copied first if shared).
    #[doc(hidden)]
    pub fn schemas_mut(&mut self) -> (&mut JsonObject, Option<&mut JsonObject>) {
        (
            Arc::make_mut(&mut self.input_schema),
            self.output_schema.as_mut().map(Arc::make_mut),
        )
    }

    /// A definition of one of the runtime's own tools (whose names are literals, never empty).
    #[doc(hidden)]
    pub fn builtin(name: &'static str, description: &str, input_schema: JsonObject) -> Self {
        debug_assert!(!name.is_empty());
        Self {
            description: Some(description.to_owned()),
            ..Self::new_unchecked(name.to_owned(), input_schema)
        }
    }

    /// A definition named `name`, which the caller knows is not empty.
    fn new_unchecked(name: String, input_schema: JsonObject) -> Self {
        Self {
            name,
            title: None,
            description: None,
            input_schema: Arc::new(input_schema),
            output_schema: None,
            annotations: Annotations::default(),
            execution: None,
            icons: None,
            meta: None,
        }
    }

    /// This definition under another name (used by an assembly, which names tools for a model).
    #[doc(hidden)]
    pub fn renamed(&self, name: String) -> Self {
        Self {
            name,
            ..self.clone()
        }
    }
}

/// What a source says about a tool besides what it takes: claims, not guarantees.
///
/// Each hint is `None` when the source did not say, and is then left out of the JSON form, so
/// that the documented default applies ([`Annotations::hints`]). A decision about what a tool may
/// do must not rest on these alone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may destroy something (meaningful only when it is not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling the tool twice with the same input does no more than once (meaningful only when
    /// it is not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool reaches beyond the system it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl Annotations {
    /// The hints with the documented defaults filled in where the source said nothing: not
    /// read-only, destructive, not idempotent, open-world. A read-only tool is neither
    /// destructive nor idempotent-relevant, so both read as `false` for it.
    ///
    /// ```
    /// use toolkit_core::Annotations;
    ///
    /// let silent = Annotations::default().hints();
    /// assert!(!silent.read_only && silent.destructive && !silent.idempotent && silent.open_world);
    ///
    /// let reader = Annotations { read_only: Some(true), destructive: Some(true), ..Default::default() };
    /// assert!(!reader.hints().destructive);
    /// ```
    pub fn hints(&self) -> Hints {
        let read_only = self.read_only.unwrap_or(false);
        Hints {
            read_only,
            destructive: !read_only && self.destructive.unwrap_or(true),
            idempotent: !read_only && self.idempotent.unwrap_or(false),
            open_world: self.open_world.unwrap_or(true),
        }
    }
}

/// The effective hints of a tool: [`Annotations`] with the defaults applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hints {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may destroy something; always `false` for a read-only tool.
    pub destructive: bool,
    /// Repeating a call does no more than one call; always `false` for a read-only tool.
    pub idempotent: bool,
    /// The tool reaches beyond its own system.
    pub open_world: bool,
}

/// Why a value is no [`ToolDefinition`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefinitionError {
    /// The name is the empty string.
    EmptyName,
    /// `inputSchema` is not a JSON object.
    SchemaNotObject,
    /// `outputSchema` is there and not a JSON object.
    OutputSchemaNotObject,
    /// `execution`, `icons` or `_meta` is there and not of its kind (an object, an array, an
    /// object); the key is named.
    NotOfItsKind(&'static str),
}

impl fmt::Display for DefinitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyName => f.write_str("a tool's name must not be empty"),
            Self::SchemaNotObject => f.write_str("a tool's inputSchema must be a JSON object"),
            Self::OutputSchemaNotObject => {
                f.write_str("a tool's outputSchema, when there is one, must be a JSON object")
            }
            Self::NotOfItsKind("icons") => f.write_str("a tool's icons must be a JSON array"),
            Self::NotOfItsKind(key) => write!(f, "a tool's {key} must be a JSON object"),
        }
    }
}

impl std::error::Error for DefinitionError {}

/// The wire form, checked into a [`ToolDefinition`] by `TryFrom`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDefinition {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    input_schema: Value,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    annotations: Annotations,
    #[serde(default)]
    execution: Option<Value>,
    #[serde(default)]
    icons: Option<Value>,
    #[serde(default, rename = "_meta")]
    meta: Option<Value>,
}

/// `value` as an object, when it is one; `None` for null; else the key's error.
fn object_of(
    key: &'static str,
    value: Option<Value>,
) -> Result<Option<Arc<JsonObject>>, DefinitionError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(object)) => Ok(Some(Arc::new(object))),
        Some(_) => Err(DefinitionError::NotOfItsKind(key)),
    }
}

impl TryFrom<RawDefinition> for ToolDefinition {
    type Error = DefinitionError;

    fn try_from(raw: RawDefinition) -> Result<Self, Self::Error> {
        let Value::Object(input_schema) = raw.input_schema else {
            return Err(DefinitionError::SchemaNotObject);
        };
        let mut definition = Self::new(raw.name, input_schema)?;
        definition.output_schema = match raw.output_schema {
            None | Some(Value::Null) => None,
            Some(Value::Object(schema)) => Some(Arc::new(schema)),
            Some(_) => return Err(DefinitionError::OutputSchemaNotObject),
        };
        definition.title = raw.title;
        definition.description = raw.description;
        definition.annotations = raw.annotations;
        definition.execution = object_of("execution", raw.execution)?;
        definition.meta = object_of("_meta", raw.meta)?;
        definition.icons = match raw.icons {
            None | Some(Value::Null) => None,
            Some(Value::Array(icons)) => Some(Arc::new(icons)),
            Some(_) => return Err(DefinitionError::NotOfItsKind("icons")),
        };
        Ok(definition)
    }
}

/// Reads a catalog: a JSON array of definitions.
///
/// Every entry is read; the error names each entry that is no definition, by its index and, where
/// it has one, its name.
///
/// ```
/// let catalog = r#"[{"name": "a", "inputSchema": {"type": "object"}}, {"name": "", "inputSchema": {}}]"#;
/// let error = toolkit_core::decode_catalog(catalog).unwrap_err();
/// assert_eq!(error.to_string(), "catalog entry 1: a tool's name must not be empty");
/// ```
///
/// # Errors
///
/// [`CatalogError`] when the text is not a JSON array or any entry is no definition.
pub fn decode_catalog(json: &str) -> Result<Vec<ToolDefinition>, CatalogError> {
    let entries: Vec<Value> = serde_json::from_str(json).map_err(|error| CatalogError {
        problems: vec![format!("the catalog is not a JSON array: {error}")],
    })?;
    let mut definitions = Vec::with_capacity(entries.len());
    let mut problems = Vec::new();
    for (index, entry) in entries.into_iter().enumerate() {
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
            .map(|name| format!(" ({name:?})"))
            .unwrap_or_default();
        match serde_json::from_value::<ToolDefinition>(entry) {
            Ok(definition) => definitions.push(definition),
            Err(error) => problems.push(format!("catalog entry {index}{name}: {error}")),
        }
    }
    if problems.is_empty() {
        Ok(definitions)
    } else {
        Err(CatalogError { problems })
    }
}

/// Writes a catalog: the definitions as a JSON array, the same bytes for the same definitions.
pub fn encode_catalog(definitions: &[ToolDefinition]) -> String {
    // Serializing owned, string-keyed data cannot fail.
    serde_json::to_string(definitions).unwrap_or_default()
}

/// A catalog that could not be read, with every problem it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogError {
    problems: Vec<String>,
}

impl CatalogError {
    /// Each problem, naming its entry.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problems.join("\n"))
    }
}

impl std::error::Error for CatalogError {}
