//! A running gateway given a changed configuration, without a restart: [`Reloads`] wakes on
//! SIGHUP or when the configuration file's content changes, and [`Gateway::reloaded`] makes the
//! gateway the new configuration describes, keeping every source whose settings did not change
//! (so their connections, sessions, subscriptions and tasks go on) and refusing, with its
//! problems, a configuration that does not check (the old one keeps serving).
//!
//! What a reload applies: the policy, the presentation and catalog settings, `[serve.auth]`'s
//! settings (each request is checked by the authenticator current when it arrives), and sources
//! of every kind added, removed or changed. An MCP source added is probed and listed, its
//! resources, prompts and tasks served; one removed or changed is closed once nothing holds it,
//! and its tasks are forgotten (their ids meant its old connection). What needs a restart, and is
//! refused with a message that says so: the rest of `[serve]` (the transport, the address, the
//! limits; authentication switched on or off, or its `resource`), `[audit]`, `[approval]`, and
//! the first source with `oauth.per_person` (its connection pages are routed at the start).

use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolkit_core::ToolSource;

use toolkit_mcp::Mcp;

use super::catalog::Catalog;
use super::config::Config;
use super::policy::Policy;
use super::{Gateway, serving, sources, tell_roots_changed};

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

/// What changed from `old` to `new` that a running gateway cannot take: `[serve]` but for its
/// authentication's settings (the transport, the address, the limits; authentication switched on
/// or off, or its resource), `[audit]` and `[approval]`.
fn restarts(old: &Config, new: &Config) -> Vec<String> {
    let mut problems = Vec::new();
    let without_auth = |config: &Config| {
        let mut serve = config.serve.clone();
        serve.auth = None;
        serve
    };
    let resource = |config: &Config| config.serve.auth.as_ref().map(|auth| auth.resource.clone());
    for (section, unchanged) in [
        ("[serve]", without_auth(old) == without_auth(new)),
        (
            "[serve.auth] switched on or off, or its `resource`",
            resource(old) == resource(new),
        ),
        ("[audit]", old.audit == new.audit),
        ("[approval]", old.approval == new.approval),
    ] {
        if !unchanged {
            problems.push(format!("{section} changed: that needs a restart"));
        }
    }
    // The webhooks the gateway receives are read at the start (`webhook_inbox.rs`).
    let webhooks = |config: &Config| -> Vec<(String, crate::config::WebhooksConfig)> {
        config
            .sources
            .iter()
            .filter_map(|source| Some((source.name.clone(), source.webhooks.clone()?)))
            .collect()
    };
    if webhooks(old) != webhooks(new) {
        problems.push(
            "a source's `webhooks` changed: that needs a restart (the webhooks received are \
             read at the start)"
                .to_owned(),
        );
    }
    problems
}

impl Gateway {
    /// The gateway `config` describes, made from this one: the sources whose settings did not
    /// change kept as they are (with their tools as last listed, and an MCP source with its
    /// connection), the others made anew; and the names of the sources made anew, whose tools
    /// are to be listed.
    ///
    /// # Errors
    ///
    /// Every problem found: a change that needs a restart, or what [`Gateway::new`] would
    /// refuse of the new configuration (its policy, a source's variables or document).
    pub fn reloaded(&self, config: Config) -> Result<(Gateway, Vec<String>), String> {
        let mut problems = restarts(&self.config, &config);
        let per_person = |config: &Config| {
            config
                .sources
                .iter()
                .any(|source| source.oauth.as_ref().is_some_and(|oauth| oauth.per_person))
        };
        if self.connects.is_none() && per_person(&config) {
            problems.push(
                "a source with `oauth.per_person` where none had it: that needs a restart (the \
                 connection pages are routed at the start)"
                    .to_owned(),
            );
        }
        let policy = Policy::new(&config.policy).map_err(|error| problems.push(error.0));
        let mut served_sources = Vec::new();
        let mut listed = Vec::new();
        let mut catalog = Catalog::default();
        let mut upstreams = Vec::new();
        let mut added = Vec::new();
        let mut changes = Vec::new();
        let mut lifetimes = Vec::new();
        for source in &config.sources {
            let kept = self
                .config
                .sources
                .iter()
                .position(|old| old == source)
                .and_then(|index| self.sources.get(index));
            if let Some((kept, timeout)) = kept {
                served_sources.push((Arc::clone(kept) as Arc<dyn ToolSource>, *timeout));
                if let Some(definitions) = self.catalog.get(&source.name) {
                    catalog.set(source.name.clone(), definitions.to_vec());
                }
                let named = |(name, ..): &&(String, bool, Arc<Mcp>)| *name == source.name;
                upstreams.extend(self.upstreams.iter().find(named).cloned());
                lifetimes.extend(
                    self.lifetimes
                        .iter()
                        .filter(|(name, _)| *name == source.name)
                        .cloned(),
                );
                continue;
            }
            match sources::made(source, &self.clients, self.connects.as_ref()) {
                Ok(made) => {
                    let source_served = serving(source, &made, &self.metrics, self.audit.as_ref());
                    served_sources.push((source_served, source.timeout()));
                    if let Some(mcp) = made.mcp {
                        upstreams.push((source.name.clone(), source.prefix, Arc::clone(&mcp)));
                        added.push((source.name.clone(), source.prefix, mcp));
                    }
                    changes.extend(made.changes.map(|changes| (source.name.clone(), changes)));
                    lifetimes.extend(made.lifetime.map(|handle| (source.name.clone(), handle)));
                    listed.push(source.name.clone());
                }
                Err(error) => problems.push(error.0),
            }
        }
        match policy {
            Ok(policy) if problems.is_empty() => {
                tell_roots_changed(&self.clients, &added);
                let mut gateway = self.clone();
                gateway.config = config;
                gateway.policy = policy;
                gateway.sources = served_sources;
                gateway.catalog = catalog;
                gateway.upstreams = upstreams;
                gateway.changes = Arc::new(Mutex::new(changes));
                gateway.lifetimes = lifetimes;
                Ok((gateway, listed))
            }
            _ => Err(problems.join("\n")),
        }
    }

    /// The MCP sources, as the resources and tasks served are to pass to them.
    pub(crate) fn upstreams(&self) -> &[(String, bool, Arc<Mcp>)] {
        &self.upstreams
    }

    /// The compiled policy (what a reload hands the resources served).
    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_of_the_webhooks_received_needs_a_restart() {
        let config = |keep: usize| {
            Config::parse(&format!(
                "[policy]\ndefault = \"allow\"\n\n[[sources]]\nname = \"shop\"\nopenapi = \
                 \"shop.json\"\nbase_url = \"http://127.0.0.1:9\"\nwebhooks = {{ secret_env = \
                 \"SECRET\", keep = {keep} }}\n"
            ))
        };
        let (Ok(before), Ok(same), Ok(after)) = (config(10), config(10), config(20)) else {
            unreachable!("the configurations parse")
        };
        assert!(restarts(&before, &same).is_empty());
        let problems = restarts(&before, &after);
        assert!(
            problems
                .iter()
                .any(|problem| problem.contains("`webhooks` changed")),
            "{problems:?}"
        );
    }
}
