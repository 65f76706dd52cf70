//! A host's own skills, served from a folder: [`SkillFolder`]. Each folder below the root that
//! holds a `SKILL.md` is a skill, served at `skill://<its path from the root>/SKILL.md`, its files
//! as resources (`resources/list`, `resources/read`) and its entry by `skills/list` and
//! `skills/get` (SEP-2640), with each file's digest and size. Read by rmcp's `SkillCatalog`, which
//! checks each skill as the extension and the Agent Skills specification say (its name, its
//! frontmatter, its limits), leaves out hidden entries and does not follow a link out of the
//! root.

use std::path::PathBuf;

use rmcp::handler::server::skill_catalog::SkillCatalog;
use serde_json::Value;
use toolkit_core::{BoxFuture, JsonObject};

use crate::resources::{Offer, Refusal, Resources};

/// The skills of a folder, as a server's [`Resources`]
/// ([`McpServer::resources`](crate::McpServer::resources)).
///
/// ```no_run
/// use std::sync::Arc;
/// use toolkit_core::Toolkit;
/// use toolkit_serve::{McpServer, SkillFolder};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let skills = SkillFolder::open("skills")?;
/// let server = McpServer::new(Toolkit::default()).resources(Arc::new(skills));
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
pub struct SkillFolder {
    catalog: SkillCatalog,
    root: PathBuf,
}

impl std::fmt::Debug for SkillFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillFolder")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl SkillFolder {
    /// The skills of the folder `root`, as they are now (read again by [`SkillFolder::reload`]).
    ///
    /// # Errors
    ///
    /// A folder that cannot be read, or a skill in it that breaks the rules, named.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, String> {
        let root = root.into();
        let catalog = SkillCatalog::from_dir(&root)
            .map_err(|error| format!("the skills of {}: {error}", root.display()))?;
        Ok(Self { catalog, root })
    }

    /// Reads the folder again: whether what it serves changed.
    ///
    /// # Errors
    ///
    /// As [`SkillFolder::open`]; what was served before goes on being served.
    pub fn reload(&self) -> Result<bool, String> {
        self.catalog
            .reload()
            .map_err(|error| format!("the skills of {}: {error}", self.root.display()))
    }
}

/// `value` as JSON, or the failure a client reads.
fn json<T: serde::Serialize>(value: &T) -> Result<Value, Refusal> {
    serde_json::to_value(value).map_err(|error| Refusal::Failed(error.to_string()))
}

fn none(what: &str) -> Refusal {
    Refusal::Unsupported(format!("{what} is not served"))
}

impl Resources for SkillFolder {
    fn offer(&self) -> Offer {
        Offer::none().with_resources(false).with_skills()
    }

    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async move { self.catalog.resources().iter().map(json).collect() })
    }

    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn read_resource<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            match self.catalog.read_resource(uri).map(|read| json(&read)) {
                Some(Ok(Value::Object(read))) => Ok(read),
                Some(Ok(_)) => Err(Refusal::Failed(format!("{uri} cannot be read"))),
                Some(Err(refusal)) => Err(refusal),
                None => Err(Refusal::NotFound(format!("No resource {uri} is served."))),
            }
        })
    }

    fn subscribe<'a>(&'a self, _uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async { Err(none("resources/subscribe")) })
    }

    fn unsubscribe<'a>(&'a self, _uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async { Err(none("resources/unsubscribe")) })
    }

    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        _arguments: JsonObject,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move { Err(Refusal::NotFound(format!("No prompt {name} is served."))) })
    }

    fn complete(&self, _params: JsonObject) -> BoxFuture<'_, Result<JsonObject, Refusal>> {
        Box::pin(async { Err(none("completion/complete")) })
    }

    fn list_skills(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async move { self.catalog.skills().iter().map(json).collect() })
    }

    fn get_skill<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Value, Refusal>> {
        Box::pin(async move {
            match self.catalog.get_skill(uri) {
                Ok(got) => json(&got.skill),
                Err(_) => Err(Refusal::InvalidParams(format!("No skill {uri} is served."))),
            }
        })
    }
}
