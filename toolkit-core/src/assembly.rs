//! The one toolkit of an agent's turn, from many sources, under a policy: [`Assembly`].
//!
//! Each member is a source with the definitions of its tools that the host holds (from its
//! catalog). A policy decides, for each tool, [`Decision::Allow`], [`Decision::Approve`] or
//! [`Decision::Block`]: a blocked tool is left out, an approved one needs a person's approval
//! before each call. There is no default policy: which is right is the host's to say.
//!
//! Tools are named for the model as [`naming`](crate::naming) says (`github__create_issue`); a
//! call reaches the source that owns the tool by the name that source knows it by. Building
//! contacts none of the sources.
//!
//! ```
//! use std::sync::Arc;
//! use toolkit_core::{Assembly, Decision, FnSource, FnTool, Member};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Nothing {}
//!
//! let clock = FnSource::builder("clock")
//!     .tool(FnTool::new("now", |_: Nothing| async { Ok("2026-11-29T22:00:00Z") }).read_only())
//!     .tool(FnTool::new("set", |_: Nothing| async { Ok("done") }))
//!     .build()?;
//! let definitions = clock.definitions();
//! let members = [Member::new(Arc::new(clock), definitions)];
//!
//! let toolkit = Assembly::new().toolkit(&members, |_source, definition| {
//!     if definition.annotations.hints().read_only { Decision::Allow } else { Decision::Block }
//! })?;
//! assert_eq!(toolkit.definitions().map(|d| d.name()).collect::<Vec<_>>(), ["clock__now"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::naming::{
    DEFAULT_MAX_NAME_LENGTH, MIN_MAX_NAME_LENGTH, tool_name, unprefixed_tool_name,
};
use crate::toolkit::source_handler;
use crate::{Approval, Tool, ToolDefinition, ToolSource, Toolkit};

/// What a policy decides about one tool. Serializes as `"allow"`, `"approve"`, `"block"`, so a
/// policy can be stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The model may call the tool.
    Allow,
    /// The model may call the tool once a person approves the call.
    Approve,
    /// The model is not shown the tool.
    Block,
}

/// One source of an assembly, with the definitions of its tools that the host holds.
#[derive(Clone)]
pub struct Member {
    /// The source that runs the tools.
    pub source: Arc<dyn ToolSource>,
    /// The tools of the source, as the host's catalog holds them.
    pub definitions: Vec<ToolDefinition>,
}

impl Member {
    /// A member of `source` with `definitions`.
    pub fn new(source: Arc<dyn ToolSource>, definitions: Vec<ToolDefinition>) -> Self {
        Self {
            source,
            definitions,
        }
    }
}

impl fmt::Debug for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Member")
            .field("source", &self.source.name())
            .field("definitions", &self.definitions.len())
            .finish()
    }
}

/// Builds the toolkit of a turn from members under a policy.
#[derive(Clone, Debug)]
pub struct Assembly {
    max_name_length: usize,
    /// The sources whose tools keep their own names (no `source__`).
    unprefixed: std::collections::BTreeSet<String>,
}

impl Default for Assembly {
    fn default() -> Self {
        Self {
            max_name_length: DEFAULT_MAX_NAME_LENGTH,
            unprefixed: std::collections::BTreeSet::new(),
        }
    }
}

impl Assembly {
    /// An assembly with the default options (names of at most 64 characters).
    pub fn new() -> Self {
        Self::default()
    }

    /// Cuts names to `length` characters, for an agent that adds to the names it is given and
    /// so takes fewer than 64. At least [`MIN_MAX_NAME_LENGTH`] (16); a smaller value fails
    /// [`Assembly::toolkit`].
    ///
    /// ```
    /// use toolkit_core::Assembly;
    /// let assembly = Assembly::new().max_name_length(40);
    /// ```
    #[must_use]
    pub fn max_name_length(mut self, length: usize) -> Self {
        self.max_name_length = length;
        self
    }

    /// Names the tools of the source `source` by their own names, without `source__` (as a
    /// gateway that fronts one server serves them); the other naming rules still apply, and a
    /// name two tools would share fails [`Assembly::toolkit`] as any clash does.
    ///
    /// ```
    /// use toolkit_core::Assembly;
    /// let assembly = Assembly::new().unprefixed("github");
    /// ```
    #[must_use]
    pub fn unprefixed(mut self, source: impl Into<String>) -> Self {
        self.unprefixed.insert(source.into());
        self
    }

    /// The toolkit of `members`' tools as `decide` allows them: blocked tools left out, approved
    /// ones needing approval, every tool named `source__tool` (or by its own name, for a source
    /// named in [`Assembly::unprefixed`]).
    ///
    /// # Errors
    ///
    /// [`AssemblyError::NameClash`] with every clash when tools would share a name;
    /// [`AssemblyError::MaxNameLength`] when the maximum is below 16.
    pub fn toolkit(
        &self,
        members: &[Member],
        decide: impl Fn(&str, &ToolDefinition) -> Decision,
    ) -> Result<Toolkit, AssemblyError> {
        if self.max_name_length < MIN_MAX_NAME_LENGTH {
            return Err(AssemblyError::MaxNameLength {
                given: self.max_name_length,
            });
        }
        let mut named: IndexMap<String, Vec<(&Member, &ToolDefinition, Decision)>> =
            IndexMap::new();
        for member in members {
            let source = member.source.name();
            for definition in &member.definitions {
                let decision = decide(source, definition);
                if decision == Decision::Block {
                    continue;
                }
                let name = if self.unprefixed.contains(source) {
                    unprefixed_tool_name(definition.name(), self.max_name_length)
                } else {
                    tool_name(source, definition.name(), self.max_name_length)
                };
                named
                    .entry(name)
                    .or_default()
                    .push((member, definition, decision));
            }
        }
        let clashes: Vec<Clash> = named
            .iter()
            .filter(|(_, owners)| owners.len() > 1)
            .map(|(name, owners)| Clash {
                name: name.clone(),
                tools: owners
                    .iter()
                    .map(|(member, definition, _)| QualifiedName {
                        source: member.source.name().to_owned(),
                        tool: definition.name().to_owned(),
                    })
                    .collect(),
            })
            .collect();
        if !clashes.is_empty() {
            return Err(AssemblyError::NameClash(NameClash { clashes }));
        }
        // Every name is distinct by now: each keys the one tool it names.
        let tools = named.into_iter().filter_map(|(name, mut owners)| {
            let (member, definition, decision) = owners.pop()?;
            let approval = match decision {
                Decision::Approve => Approval::Always,
                Decision::Allow | Decision::Block => Approval::Never,
            };
            let handler = source_handler(Arc::clone(&member.source), definition.name());
            let tool = Tool::of_source(
                definition.renamed(name.clone()),
                approval,
                handler,
                member.source.name(),
                definition.name(),
            );
            Some((name, tool))
        });
        Ok(Toolkit::from_named(tools.collect()))
    }
}

/// Why an assembly could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AssemblyError {
    /// Tools that would share a name; every clash is listed.
    NameClash(NameClash),
    /// A maximum name length below [`MIN_MAX_NAME_LENGTH`].
    MaxNameLength {
        /// The length asked for.
        given: usize,
    },
}

impl fmt::Display for AssemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NameClash(clash) => clash.fmt(f),
            Self::MaxNameLength { given } => write!(
                f,
                "a maximum name length of {given} is too small: it must be at least {MIN_MAX_NAME_LENGTH}"
            ),
        }
    }
}

impl std::error::Error for AssemblyError {}

/// Every set of tools that would share one name in an assembly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameClash {
    /// Each clash: a name and the tools that would share it.
    pub clashes: Vec<Clash>,
}

/// Tools that would share one name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clash {
    /// The name they would share.
    pub name: String,
    /// The tools, by their sources' names and their own.
    pub tools: Vec<QualifiedName>,
}

/// A tool by its source's name and its own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QualifiedName {
    /// The source's name.
    pub source: String,
    /// The tool's name in its source.
    pub tool: String,
}

impl fmt::Display for NameClash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tools would share a name:")?;
        for clash in &self.clashes {
            let tools: Vec<String> = clash
                .tools
                .iter()
                .map(|t| format!("{:?} of {:?}", t.tool, t.source))
                .collect();
            write!(f, " {:?} ({});", clash.name, tools.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for NameClash {}
