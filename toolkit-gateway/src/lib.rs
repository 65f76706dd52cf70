#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod catalog;
pub mod config;
pub mod policy;
pub mod serve;
pub mod sources;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use toolkit_runtime::{
    Assembly, CodeMode, CodeModeOptions, Member, QuickJs, SearchOptions, ToolSearch, ToolSource,
    Toolkit,
};

use self::catalog::{Catalog, RefreshFailure};
use self::config::{Config, ConfigError, Presentation};
use self::policy::Policy;

/// A configured gateway: its sources made, its policy compiled, its catalog as last known.
#[derive(Clone)]
pub struct Gateway {
    config: Config,
    policy: Policy,
    /// Each source, with how long it may take to list its tools.
    sources: Vec<(Arc<dyn ToolSource>, Duration)>,
    catalog: Catalog,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("sources", &self.sources.len())
            .field("tools", &self.catalog.len())
            .finish_non_exhaustive()
    }
}

/// What happened when the catalog was refreshed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Sources that did not answer and kept their last known tools.
    pub failures: Vec<RefreshFailure>,
    /// Whether the catalog differs from the one before.
    pub changed: bool,
    /// Why the changed catalog could not be written to its file (it is served all the same).
    pub unsaved: Option<String>,
}

impl Gateway {
    /// Makes the gateway `config` describes: every source (reading credentials from the
    /// environment), the policy, and the catalog from its file (empty when there is none).
    ///
    /// # Errors
    ///
    /// Every problem found, each naming its source or rule: an unset variable, a bad pattern, an
    /// unreadable document or catalog.
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        let mut problems = Vec::new();
        let policy = Policy::new(&config.policy).map_err(|error| problems.push(error.0));
        let mut sources = Vec::new();
        for source in &config.sources {
            match sources::make(source) {
                Ok(made) => sources.push((made, sources::timeout(source))),
                Err(error) => problems.push(error.0),
            }
        }
        let catalog = Catalog::load(&config.catalog.file).map_err(|problem| problems.push(problem));
        match (policy, catalog) {
            (Ok(policy), Ok(catalog)) if problems.is_empty() => Ok(Self {
                config,
                policy,
                sources,
                catalog,
            }),
            _ => Err(ConfigError(problems.join("\n"))),
        }
    }

    /// The configuration the gateway was made from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The catalog as last known.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The policy rules that match no tool of the catalog, as written.
    pub fn dead_rules(&self) -> Vec<String> {
        self.policy.dead_rules(&self.catalog)
    }

    /// Asks every source for its tools and keeps the answers (a source that fails keeps what it
    /// had), then writes the catalog file when the catalog changed. A file that cannot be written
    /// does not keep the new catalog from being served: [`Refresh::unsaved`] says why.
    pub async fn refresh(&mut self) -> Refresh {
        let (catalog, failures) = self.catalog.refreshed(&self.sources).await;
        let changed = catalog != self.catalog;
        let mut unsaved = None;
        if changed {
            self.catalog = catalog;
            unsaved = self.catalog.save(&self.config.catalog.file).err();
        }
        Refresh {
            failures,
            changed,
            unsaved,
        }
    }

    /// The toolkit of the catalog under the policy, presented as the configuration says.
    ///
    /// # Errors
    ///
    /// Two tools would share a name once named `source__tool` (every clash is listed).
    pub fn toolkit(&self) -> Result<Toolkit, String> {
        let members: Vec<Member> = self
            .sources
            .iter()
            .filter_map(|(source, _)| {
                let definitions = self.catalog.get(source.name())?;
                Some(Member::new(Arc::clone(source), definitions.to_vec()))
            })
            .collect();
        let assembled = Assembly::new()
            .toolkit(&members, |source, definition| {
                self.policy.decide(source, definition)
            })
            .map_err(|error| error.to_string())?;
        Ok(match self.config.serve.presentation {
            Presentation::All => assembled,
            Presentation::Search => ToolSearch::toolkit(&assembled, &SearchOptions::default()),
            Presentation::Code => CodeMode::toolkit(
                &assembled,
                Arc::new(QuickJs::default()),
                &CodeModeOptions::default(),
            ),
        })
    }

    /// How often the catalog is refreshed after the start (`None`: never).
    pub fn refresh_interval(&self) -> Option<Duration> {
        match self.config.catalog.refresh_seconds {
            0 => None,
            seconds => Some(Duration::from_secs(seconds)),
        }
    }

    /// The configuration file's catalog path (for messages).
    pub fn catalog_file(&self) -> &PathBuf {
        &self.config.catalog.file
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use toolkit_runtime::ToolDefinition;

    /// A tool of no parameters named `name`.
    pub(super) fn tool(name: &str) -> ToolDefinition {
        let schema = serde_json::json!({ "type": "object" });
        ToolDefinition::new(name, schema.as_object().cloned().unwrap()).unwrap()
    }
}
