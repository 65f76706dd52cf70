//! A toolkit as served ([`Served`]: its tools' MCP form computed once), and what each person is
//! shown when it depends on who they are: [`Views`].
//!
//! A server whose policy names people (a gateway's rules for a group, a name, a scope) shows each
//! person the toolkit of their view: `tools/list` lists what they may call, and a call of a tool
//! outside their view is a call of an unknown tool. People of one view share one toolkit, built
//! the first time one of them asks and kept until the served toolkit is replaced.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use indexmap::IndexMap;
use rmcp::model::{Icon, MetaObject, Tool as McpTool, ToolAnnotations};
use toolkit_core::context::Principal;
use toolkit_core::{Tool, ToolDefinition, Toolkit};

use super::output_check::OutputCheck;

/// The most views a served toolkit keeps built; past it, a view is built for each request that
/// needs it (correct, and slower), so that a server whose people each have a view of their own
/// does not grow without bound.
pub const MAX_KEPT_VIEWS: usize = 1_024;

/// What each person is shown: a key per person (people with one key are shown one toolkit), and
/// the toolkit of each key.
///
/// ```
/// use toolkit_core::{Toolkit, context::Principal};
/// use toolkit_serve::Views;
///
/// /// Alice is shown every tool; everyone else none.
/// struct AliceOnly(Toolkit);
///
/// impl Views for AliceOnly {
///     fn key(&self, principal: &Principal) -> String {
///         (principal.name() == "alice").to_string()
///     }
///     fn toolkit(&self, key: &str) -> Toolkit {
///         if key == "true" { self.0.clone() } else { Toolkit::default() }
///     }
/// }
/// ```
pub trait Views: Send + Sync + 'static {
    /// The key of what `principal` is shown.
    fn key(&self, principal: &Principal) -> String;

    /// The toolkit shown to the people of `key`.
    fn toolkit(&self, key: &str) -> Toolkit;
}

/// The views of one served toolkit, built as people ask.
pub(crate) struct BuiltViews {
    views: Arc<dyn Views>,
    built: Mutex<HashMap<String, Arc<Served>>>,
}

impl BuiltViews {
    pub(crate) fn new(views: Arc<dyn Views>) -> Self {
        Self {
            views,
            built: Mutex::default(),
        }
    }

    /// The toolkit served to `principal`.
    pub(crate) fn of(&self, principal: &Principal) -> Arc<Served> {
        let key = self.views.key(principal);
        if let Some(served) = self.lock().get(&key) {
            return Arc::clone(served);
        }
        // Built outside the lock: two people of a new view at once may both build it.
        let served = Arc::new(Served::new(self.views.toolkit(&key)));
        let mut built = self.lock();
        if built.len() < MAX_KEPT_VIEWS {
            built.entry(key).or_insert_with(|| Arc::clone(&served));
        }
        served
    }

    /// The toolkit of `principal`'s view, as the views give it.
    pub(crate) fn toolkit(&self, principal: &Principal) -> Toolkit {
        self.views.toolkit(&self.views.key(principal))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Served>>> {
        self.built.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for BuiltViews {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Views")
            .field("built", &self.lock().len())
            .finish_non_exhaustive()
    }
}

/// A toolkit as served: the tools, and their MCP form computed once.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) toolkit: Toolkit,
    /// The `tools/list` entries, in the toolkit's order, by name.
    pub(crate) listing: IndexMap<String, McpTool>,
    /// The check of each answer of a tool that declares an `outputSchema`, by name.
    pub(crate) outputs: HashMap<String, OutputCheck>,
    /// What each person is shown, when it depends on who they are.
    pub(crate) views: Option<BuiltViews>,
}

impl Served {
    pub(crate) fn new(toolkit: Toolkit) -> Self {
        let listing = toolkit
            .tools()
            .map(|tool| (tool.name().to_owned(), served_tool(tool)))
            .collect();
        let outputs = toolkit
            .tools()
            .filter_map(|tool| {
                let schema = tool.definition().shared_output_schema()?;
                Some((tool.name().to_owned(), OutputCheck::new(Arc::clone(schema))))
            })
            .collect();
        Self {
            toolkit,
            listing,
            outputs,
            views: None,
        }
    }
}

/// A tool as `tools/list` serves it: name, title, description, input schema, output schema,
/// icons and `_meta` as the definition has them, and the definition's hints as annotations —
/// except that a tool that may need approval is served destructive and not read-only, so that a
/// client's own approval flow asks its person.
///
/// A definition's `execution` is not served: an upstream's task tool is served as a plain one,
/// whose call the MCP source runs as a task upstream (and rmcp's `Tool` has no `execution`).
/// An icon rmcp cannot read (no `src`, a theme other than `light` or `dark`) is left out.
pub(crate) fn served_tool(tool: &Tool) -> McpTool {
    let definition = tool.definition();
    let mut served = McpTool::new_with_raw(
        definition.name().to_owned(),
        definition.description.clone().map(Into::into),
        Arc::clone(definition.shared_input_schema()),
    );
    served.title.clone_from(&definition.title);
    served.output_schema = definition.shared_output_schema().cloned();
    served.annotations = annotations(definition, tool.approval().may_be_required());
    served.icons = definition.icons().map(|icons| {
        icons
            .iter()
            .filter_map(|icon| {
                serde_json::from_value::<Icon>(icon.clone())
                    .inspect_err(|error| {
                        tracing::debug!(tool = definition.name(), %error, "an icon is left out of tools/list");
                    })
                    .ok()
            })
            .collect()
    });
    served.meta = definition.meta().cloned().map(MetaObject);
    served
}

fn annotations(definition: &ToolDefinition, needs_approval: bool) -> Option<ToolAnnotations> {
    let given = &definition.annotations;
    let mut annotations = ToolAnnotations::default();
    annotations.title.clone_from(&given.title);
    annotations.read_only_hint = given.read_only;
    annotations.destructive_hint = given.destructive;
    annotations.idempotent_hint = given.idempotent;
    annotations.open_world_hint = given.open_world;
    if needs_approval {
        annotations.read_only_hint = Some(false);
        annotations.destructive_hint = Some(true);
    }
    (annotations != ToolAnnotations::default()).then_some(annotations)
}
