//! An MCP server known from a snapshot: [`SnapshotSource`], and how the live server has moved
//! away from it, [`SnapshotDrift`].

use std::fmt;

use serde_json::Value;

use super::Mcp;
use toolkit_core::{BoxFuture, JsonObject, ToolDefinition, ToolSource, ToolSourceError};
use toolkit_core::{CatalogError, decode_catalog};

/// An MCP server whose tools are known from a snapshot of its `tools/list` (taken at build time;
/// what a source `toolkit-gen` writes for a snapshot wraps): `discover` reports the snapshot's
/// tools without contacting the server, and `call` runs any tool on the server.
///
/// A tool the live server has beyond the snapshot stays reachable: [`SnapshotSource::verify`]
/// lists it in [`SnapshotDrift::added`] with its live definition, and a host that puts those
/// definitions in the member of this source (beside the snapshot's) has the model see and call
/// it, through this same source.
///
/// # Examples
///
/// ```
/// use toolkit_mcp::{Mcp, SnapshotSource, StdioCommand};
///
/// let tools = r#"[{ "name": "list_tasks", "inputSchema": { "type": "object" } }]"#;
/// let mcp = Mcp::stdio("tasks", StdioCommand::new("tasks-server"));
/// let tasks = SnapshotSource::new(mcp, tools)?;
/// assert_eq!(tasks.definitions()[0].name(), "list_tasks");
/// # Ok::<(), toolkit_core::definition::CatalogError>(())
/// ```
#[derive(Debug)]
pub struct SnapshotSource {
    mcp: Mcp,
    definitions: Vec<ToolDefinition>,
}

impl SnapshotSource {
    /// The server `mcp` with the tools of `catalog`, a JSON array of tool definitions (as
    /// [`encode_catalog`](toolkit_core::encode_catalog) writes them).
    ///
    /// # Errors
    ///
    /// [`CatalogError`] naming every entry of `catalog` that is no definition.
    pub fn new(mcp: Mcp, catalog: &str) -> Result<Self, CatalogError> {
        Ok(Self {
            mcp,
            definitions: decode_catalog(catalog)?,
        })
    }

    /// The snapshot's tools, in its order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The server.
    pub fn mcp(&self) -> &Mcp {
        &self.mcp
    }

    /// Lists the live server's tools and compares them with the snapshot.
    ///
    /// # Errors
    ///
    /// As [`ToolSource::discover`] on the server.
    pub async fn verify(&self) -> Result<SnapshotDrift, ToolSourceError> {
        let live = self.mcp.discover().await?;
        Ok(SnapshotDrift::between(&self.definitions, &live))
    }
}

impl ToolSource for SnapshotSource {
    fn name(&self) -> &str {
        self.mcp.name()
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async move { Ok(self.definitions.clone()) })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a toolkit_core::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        self.mcp.call(tool, input, context)
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a toolkit_core::CallContext,
    ) -> BoxFuture<'a, toolkit_core::Outcome<ToolSourceError>> {
        self.mcp.call_outcome(tool, input, context)
    }
}

/// How a live server's tools differ from a snapshot of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SnapshotDrift {
    /// The tools the server lists and the snapshot does not, with their live definitions.
    pub added: Vec<ToolDefinition>,
    /// The names of the snapshot's tools the server no longer lists.
    pub removed: Vec<String>,
    /// The tools both have that differ.
    pub changed: Vec<ChangedTool>,
}

/// A tool whose live definition differs from its snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedTool {
    /// The tool's name.
    pub name: String,
    /// What differs, in the order of [`Aspect`].
    pub aspects: Vec<Aspect>,
}

/// A part of a tool's definition that may differ between a snapshot and the live server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Aspect {
    /// The input schema: a typed method may send what the server now refuses.
    InputSchema,
    /// The description.
    Description,
    /// The hints (read-only, destructive, idempotent, open-world), which a policy may decide by.
    Hints,
    /// The title.
    Title,
}

impl Aspect {
    /// The aspect in words: `input schema`, `description`, `hints`, `title`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InputSchema => "input schema",
            Self::Description => "description",
            Self::Hints => "hints",
            Self::Title => "title",
        }
    }
}

impl SnapshotDrift {
    /// How `live` differs from `snapshot`, each list in the order of the tools it comes from.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_core::ToolDefinition;
    /// use toolkit_mcp::{Aspect, SnapshotDrift};
    ///
    /// let object = |schema: serde_json::Value| schema.as_object().cloned().unwrap_or_default();
    /// let snapshot = [
    ///     ToolDefinition::new("list", object(json!({ "type": "object" })))?,
    ///     ToolDefinition::new("old", object(json!({ "type": "object" })))?,
    /// ];
    /// let live = [
    ///     ToolDefinition::new("list", object(json!({ "type": "object", "properties": { "q": {} } })))?,
    ///     ToolDefinition::new("new", object(json!({ "type": "object" })))?,
    /// ];
    /// let drift = SnapshotDrift::between(&snapshot, &live);
    /// assert_eq!(drift.added[0].name(), "new");
    /// assert_eq!(drift.removed, ["old"]);
    /// assert_eq!(drift.changed[0].aspects, [Aspect::InputSchema]);
    /// assert!(!drift.is_empty());
    /// # Ok::<(), toolkit_core::definition::DefinitionError>(())
    /// ```
    pub fn between(snapshot: &[ToolDefinition], live: &[ToolDefinition]) -> Self {
        let find = |tools: &'_ [ToolDefinition], name: &str| -> Option<usize> {
            tools.iter().position(|tool| tool.name() == name)
        };
        let added = live
            .iter()
            .filter(|tool| find(snapshot, tool.name()).is_none())
            .cloned()
            .collect();
        let mut removed = Vec::new();
        let mut changed = Vec::new();
        for old in snapshot {
            let Some(new) = find(live, old.name()).and_then(|index| live.get(index)) else {
                removed.push(old.name().to_owned());
                continue;
            };
            let mut aspects = Vec::new();
            if old.input_schema() != new.input_schema() {
                aspects.push(Aspect::InputSchema);
            }
            if old.description != new.description {
                aspects.push(Aspect::Description);
            }
            if old.annotations.hints() != new.annotations.hints() {
                aspects.push(Aspect::Hints);
            }
            if old.title != new.title || old.annotations.title != new.annotations.title {
                aspects.push(Aspect::Title);
            }
            if !aspects.is_empty() {
                changed.push(ChangedTool {
                    name: old.name().to_owned(),
                    aspects,
                });
            }
        }
        Self {
            added,
            removed,
            changed,
        }
    }

    /// Whether the live server lists exactly the snapshot's tools.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

impl fmt::Display for SnapshotDrift {
    /// One line per difference: `+ name` added, `- name` removed, `~ name: input schema, hints`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return write!(f, "the server lists the snapshot's tools, unchanged");
        }
        let mut lines = Vec::new();
        lines.extend(self.added.iter().map(|tool| format!("+ {}", tool.name())));
        lines.extend(self.removed.iter().map(|name| format!("- {name}")));
        lines.extend(self.changed.iter().map(|tool| {
            let aspects: Vec<&str> = tool.aspects.iter().map(|a| a.as_str()).collect();
            format!("~ {}: {}", tool.name, aspects.join(", "))
        }));
        write!(f, "{}", lines.join("\n"))
    }
}
