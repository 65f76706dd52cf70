//! A running gateway given a changed configuration, without a restart: [`Reloads`] wakes on
//! SIGHUP or when the configuration file's content changes, and [`Gateway::reloaded`] makes the
//! gateway the new configuration describes, keeping every source whose settings did not change
//! (so their connections, sessions, subscriptions and tasks go on) and refusing, with its
//! problems, a configuration that does not check (the old one keeps serving).
//!
//! What a reload applies: the policy, the presentation and catalog settings, and OpenAPI and
//! GraphQL sources added, removed or changed. What needs a restart, and is refused with a message
//! that says so: `[serve]` (the transport, the address, authentication), `[audit]` and
//! `[approval]`, and a change of the MCP sources (their resources, prompts and tasks are served
//! over the connections made at the start).

use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toolkit_runtime::ToolSource;

use super::catalog::Catalog;
use super::config::{Config, SourceConfig, SourceKind};
use super::policy::Policy;
use super::{Gateway, served, sources};

/// How often the configuration file is read to see whether it changed. Read rather than watched
/// with inotify (the `notify` crate): editors and `kubectl` replace the file (a rename over it,
/// a symlink swapped), which a watch of the file loses, and reading a small file every two
/// seconds costs nothing.
const POLL: Duration = Duration::from_secs(2);

/// What asks for a reload: SIGHUP, or the configuration file's content changing.
pub(crate) struct Reloads {
    path: PathBuf,
    /// The content last seen (hashed), reloaded or refused: a file is tried again once it
    /// changes again.
    seen: Option<u64>,
    #[cfg(unix)]
    hangups: Option<tokio::signal::unix::Signal>,
}

fn content(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Some(hasher.finish())
}

impl Reloads {
    /// Reloads of the configuration at `path`, as it is now.
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            seen: content(&path),
            path,
            #[cfg(unix)]
            hangups: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok(),
        }
    }

    /// The configuration file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Completes at the next SIGHUP, or once the file's content differs from the last seen.
    pub(crate) async fn next(&mut self) -> &'static str {
        let mut polls = tokio::time::interval(POLL);
        polls.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            #[cfg(unix)]
            let hangup = async {
                match self.hangups.as_mut() {
                    Some(hangups) => {
                        hangups.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            #[cfg(not(unix))]
            let hangup = std::future::pending::<()>();
            tokio::select! {
                () = hangup => {
                    self.seen = content(&self.path);
                    return "SIGHUP";
                }
                _ = polls.tick() => {
                    let now = content(&self.path);
                    if now.is_some() && now != self.seen {
                        self.seen = now;
                        return "the file changed";
                    }
                }
            }
        }
    }
}

/// Whether `source` is an MCP server (over HTTP or stdio).
fn is_mcp(source: &SourceConfig) -> bool {
    matches!(
        source.kind(),
        Ok(SourceKind::McpUrl(_) | SourceKind::McpCommand(_))
    )
}

/// The same settings: the configuration's types print every field they hold (and hold no
/// secret, only the names of the variables that do).
fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

impl Gateway {
    /// The gateway `config` describes, made from this one: the sources whose settings did not
    /// change kept as they are (with their tools as last listed), the others made anew; and the
    /// names of the sources made anew, whose tools are to be listed.
    ///
    /// # Errors
    ///
    /// Every problem found: a change that needs a restart, or what [`Gateway::new`] would
    /// refuse of the new configuration (its policy, a source's variables or document).
    pub fn reloaded(&self, config: Config) -> Result<(Gateway, Vec<String>), String> {
        let mut problems = Vec::new();
        for (section, unchanged) in [
            ("[serve]", same(&self.config.serve, &config.serve)),
            ("[audit]", same(&self.config.audit, &config.audit)),
            ("[approval]", same(&self.config.approval, &config.approval)),
        ] {
            if !unchanged {
                problems.push(format!("{section} changed: that needs a restart"));
            }
        }
        let mcp = |sources: &[SourceConfig]| -> Vec<String> {
            sources
                .iter()
                .filter(|source| is_mcp(source))
                .map(|source| format!("{source:?}"))
                .collect()
        };
        if mcp(&self.config.sources) != mcp(&config.sources) {
            problems.push(
                "the MCP sources changed: that needs a restart (their resources, prompts and \
                 tasks are served over the connections made at the start)"
                    .to_owned(),
            );
        }
        let policy = Policy::new(&config.policy).map_err(|error| problems.push(error.0));
        let mut served_sources = Vec::new();
        let mut listed = Vec::new();
        let mut catalog = Catalog::default();
        for source in &config.sources {
            let kept = self
                .config
                .sources
                .iter()
                .position(|old| old.name == source.name && same(old, source))
                .and_then(|index| self.sources.get(index));
            if let Some((kept, timeout)) = kept {
                served_sources.push((Arc::clone(kept) as Arc<dyn ToolSource>, *timeout));
                if let Some(definitions) = self.catalog.get(&source.name) {
                    catalog.set(source.name.clone(), definitions.to_vec());
                }
                continue;
            }
            match sources::made(source, &self.clients, self.connects.as_ref()) {
                Ok(made) => {
                    let source_served = served(
                        made.source,
                        &self.metrics,
                        self.audit.as_ref(),
                        &made.resilient,
                    );
                    served_sources.push((source_served, source.timeout()));
                    listed.push(source.name.clone());
                }
                Err(error) => problems.push(error.0),
            }
        }
        match policy {
            Ok(policy) if problems.is_empty() => {
                let mut gateway = self.clone();
                gateway.config = config;
                gateway.policy = policy;
                gateway.sources = served_sources;
                gateway.catalog = catalog;
                Ok((gateway, listed))
            }
            _ => Err(problems.join("\n")),
        }
    }

    /// The compiled policy (what a reload hands the resources served).
    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }
}
