//! A static audit of an MCP `tools/list`: what a strict client, a model API or this toolkit's
//! runtime will refuse, drop or rename, found before any server runs.
//!
//! [`audit`] sweeps the tools of a listing as raw JSON (so that an entry which is no tool at all is
//! reported too, not lost in decoding) and returns a [`Finding`] for each problem, located by the
//! tool and a JSON pointer into the tool object. The checks, by [`Check`]:
//!
//! | check | severity | what |
//! | --- | --- | --- |
//! | `malformedTool` | error | an entry that is no object, has no name, or no `inputSchema` object: a client leaves it out |
//! | `duplicateName` | error | two tools with one name |
//! | `toolName` | warning | a name outside MCP's `[A-Za-z0-9_.-]{1,128}` |
//! | `modelName` | info | a name model APIs refuse as it is (`[A-Za-z0-9_-]{1,64}`, starting with a letter or `_`): it is renamed for the model |
//! | `nameClash` | warning | two names that become one once renamed for model APIs |
//! | `description` | warning | a tool without a description |
//! | `parameterDescriptions` | info | top-level parameters without a description |
//! | `objectRootedInput` | error | an `inputSchema` whose root is not `type: "object"` (a union root, say) |
//! | `closedInput` | info (configurable) | an object level of the input that accepts properties it does not name |
//! | `requiredUnknown` | warning | `required` names a property the level does not declare |
//! | `inputSchema` | warning | an input schema that is no valid JSON Schema: only an object is checked |
//! | `objectRootedOutput` | error | an `outputSchema` whose root is not `type: "object"` (a bare `anyOf`) |
//! | `mcpHeader` | error / warning | an `x-mcp-header` mark a client over HTTP refuses (the tool is dropped), or one the specification forbids but this runtime accepts (`number`, no `type`) |
//! | `taskRequired` | warning | `execution.taskSupport: "required"`: a client without tasks cannot call the tool |
//! | `hints` | warning / info | annotations that are no booleans, or that contradict each other |
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use toolkit_gen::audit::{AuditOptions, Check, Severity, audit};
//!
//! let tools = [json!({
//!     "name": "get weather",
//!     "inputSchema": { "anyOf": [{ "type": "object" }, { "type": "string" }] }
//! })];
//! let findings = audit(&tools, &AuditOptions::default());
//! let union_root = findings.iter().find(|f| f.check == Check::ObjectRootedInput);
//! assert_eq!(union_root.map(|f| (f.severity, f.pointer.as_str())), Some((Severity::Error, "#/inputSchema")));
//! assert!(findings.iter().any(|f| f.check == Check::ToolName));
//! assert!(findings.iter().any(|f| f.check == Check::Description));
//! ```

mod hints;
mod input;
mod names;
mod output;
mod pointer;
mod report;

use std::fmt;

use serde_json::{Map, Value, json};
use toolkit_core::ToolDefinition;

pub use report::{Summary, text, to_json};

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; nothing breaks.
    Info,
    /// Something works worse than it should, or breaks for some clients.
    Warning,
    /// A client or model API refuses or drops the tool.
    Error,
}

impl Severity {
    /// The lowercase word: `info`, `warning`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a finding is about; see the table of [the module](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// An entry that is no tool a client can use.
    MalformedTool,
    /// Two tools with one name.
    DuplicateName,
    /// A name outside MCP's `[A-Za-z0-9_.-]{1,128}`.
    ToolName,
    /// A name model APIs refuse as it is.
    ModelName,
    /// Two names that become one once renamed for model APIs.
    NameClash,
    /// A tool without a description.
    Description,
    /// Top-level parameters without a description.
    ParameterDescriptions,
    /// An input schema whose root is not `type: "object"`.
    ObjectRootedInput,
    /// An object level of the input that accepts properties it does not name.
    ClosedInput,
    /// `required` names a property the level does not declare.
    RequiredUnknown,
    /// An input schema that is no valid JSON Schema.
    InputSchema,
    /// An output schema whose root is not `type: "object"`.
    ObjectRootedOutput,
    /// An `x-mcp-header` mark a client refuses, or one the specification forbids.
    McpHeader,
    /// A tool that runs only as a task.
    TaskRequired,
    /// Annotations that are no booleans, or that contradict each other.
    Hints,
}

impl Check {
    /// The check's name in JSON: `objectRootedInput`, `mcpHeader`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MalformedTool => "malformedTool",
            Self::DuplicateName => "duplicateName",
            Self::ToolName => "toolName",
            Self::ModelName => "modelName",
            Self::NameClash => "nameClash",
            Self::Description => "description",
            Self::ParameterDescriptions => "parameterDescriptions",
            Self::ObjectRootedInput => "objectRootedInput",
            Self::ClosedInput => "closedInput",
            Self::RequiredUnknown => "requiredUnknown",
            Self::InputSchema => "inputSchema",
            Self::ObjectRootedOutput => "objectRootedOutput",
            Self::McpHeader => "mcpHeader",
            Self::TaskRequired => "taskRequired",
            Self::Hints => "hints",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem of one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// What it is about.
    pub check: Check,
    /// The tool's name, or `#/tools/<index>` for an entry without one.
    pub tool: String,
    /// The tool's place in the listing, from 0.
    pub index: usize,
    /// Where, as a JSON pointer into the tool object (`#/inputSchema/properties/region`).
    pub pointer: String,
    /// What is wrong and what follows, in a sentence or two.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}] {} {}: {}",
            self.severity, self.check, self.tool, self.pointer, self.message
        )
    }
}

/// What the audit holds tools to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditOptions {
    /// The severity of an open object level of an input (`closedInput`); `None` leaves the check
    /// out. Info by default: the structs toolkit-gen writes refuse unknown properties whatever
    /// the schema says, but a client that follows the schema sends them on.
    pub closed_input: Option<Severity>,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            closed_input: Some(Severity::Info),
        }
    }
}

/// Builder methods: each sets one field, the others keep their [`Default`] values.
impl AuditOptions {
    /// Sets [`closed_input`](Self::closed_input): a severity, or `None` to leave the check out.
    #[must_use]
    pub fn closed_input(mut self, closed_input: impl Into<Option<Severity>>) -> Self {
        self.closed_input = closed_input.into();
        self
    }
}

/// The tools of a listing in any of the shapes `toolkit-gen mcp` reads: a snapshot
/// (`{"server", "protocolVersion", "tools"}`), a bare `tools/list` result (`{"tools": [...]}`) or
/// a bare array of tools. `None` for anything else.
pub fn tools_of(listing: &Value) -> Option<&[Value]> {
    match listing {
        Value::Array(tools) => Some(tools),
        Value::Object(map) => map
            .get("tools")
            .and_then(Value::as_array)
            .map(Vec::as_slice),
        _ => None,
    }
}

/// Audits the tools of a `tools/list` (each as the server wrote it), in the order of the tools,
/// then by check. Never panics, whatever the values.
pub fn audit(tools: &[Value], options: &AuditOptions) -> Vec<Finding> {
    audit_with(tools, options, &mut |_| {})
}

/// [`audit`], calling `done` with each tool's index once the tool is audited (to drive a
/// progress bar).
pub fn audit_with(
    tools: &[Value],
    options: &AuditOptions,
    done: &mut dyn FnMut(usize),
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut names = names::Names::default();
    for (index, tool) in tools.iter().enumerate() {
        let mut at = ToolFindings {
            tool: match tool.get("name").and_then(Value::as_str) {
                Some(name) if !name.is_empty() => name.to_owned(),
                _ => format!("#/tools/{index}"),
            },
            index,
            findings: &mut findings,
        };
        let Some(object) = tool.as_object() else {
            at.push(
                Severity::Error,
                Check::MalformedTool,
                "#",
                "the entry is no JSON object, so no tool".to_owned(),
            );
            done(index);
            continue;
        };
        audit_tool(object, options, &mut names, &mut at);
        done(index);
    }
    findings
}

/// Audits tool definitions (as a catalog or a generated source holds them), as the MCP tools a
/// toolkit serving them would list. A definition has no output schema, so `objectRootedOutput`
/// never applies.
pub fn audit_definitions(definitions: &[ToolDefinition], options: &AuditOptions) -> Vec<Finding> {
    let tools: Vec<Value> = definitions.iter().map(listed_tool).collect();
    audit(&tools, options)
}

/// A definition as the MCP `Tool` a server lists.
fn listed_tool(definition: &ToolDefinition) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(definition.name()));
    if let Some(title) = &definition.title {
        tool.insert("title".into(), json!(title));
    }
    if let Some(description) = &definition.description {
        tool.insert("description".into(), json!(description));
    }
    tool.insert(
        "inputSchema".into(),
        Value::Object(definition.input_schema().clone()),
    );
    let annotations = &definition.annotations;
    let mut hints = Map::new();
    for (key, hint) in [
        ("readOnlyHint", annotations.read_only),
        ("destructiveHint", annotations.destructive),
        ("idempotentHint", annotations.idempotent),
        ("openWorldHint", annotations.open_world),
    ] {
        if let Some(hint) = hint {
            hints.insert(key.into(), Value::Bool(hint));
        }
    }
    if let Some(title) = &annotations.title {
        hints.insert("title".into(), json!(title));
    }
    if !hints.is_empty() {
        tool.insert("annotations".into(), Value::Object(hints));
    }
    Value::Object(tool)
}

fn audit_tool(
    tool: &Map<String, Value>,
    options: &AuditOptions,
    names: &mut names::Names,
    at: &mut ToolFindings<'_>,
) {
    match tool.get("name") {
        Some(Value::String(name)) if !name.is_empty() => names.check(name, at),
        Some(Value::String(_)) => at.push(
            Severity::Error,
            Check::MalformedTool,
            "#/name",
            "the name is empty".to_owned(),
        ),
        Some(_) => at.push(
            Severity::Error,
            Check::MalformedTool,
            "#/name",
            "the name is no string".to_owned(),
        ),
        None => at.push(
            Severity::Error,
            Check::MalformedTool,
            "#",
            "the tool has no name".to_owned(),
        ),
    }
    match tool.get("description") {
        Some(Value::String(text)) if !text.trim().is_empty() => {}
        Some(Value::String(_)) | None | Some(Value::Null) => at.push(
            Severity::Warning,
            Check::Description,
            "#",
            "the tool has no description: a model picks tools by what they say they do".to_owned(),
        ),
        Some(_) => at.push(
            Severity::Warning,
            Check::Description,
            "#/description",
            "the description is no string, so a client reads none".to_owned(),
        ),
    }
    match tool.get("inputSchema") {
        Some(Value::Object(schema)) => input::audit(schema, options, at),
        Some(_) => at.push(
            Severity::Error,
            Check::MalformedTool,
            "#/inputSchema",
            "the inputSchema is no JSON object: a client leaves the tool out".to_owned(),
        ),
        None => at.push(
            Severity::Error,
            Check::MalformedTool,
            "#",
            "the tool has no inputSchema: a client leaves it out".to_owned(),
        ),
    }
    if let Some(schema) = tool.get("outputSchema") {
        output::audit(schema, at);
    }
    hints::audit(tool, at);
}

/// The findings of one tool, as they are found.
struct ToolFindings<'a> {
    tool: String,
    index: usize,
    findings: &'a mut Vec<Finding>,
}

impl ToolFindings<'_> {
    fn push(&mut self, severity: Severity, check: Check, pointer: &str, message: String) {
        self.findings.push(Finding {
            severity,
            check,
            tool: self.tool.clone(),
            index: self.index,
            pointer: pointer.to_owned(),
            message,
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
