//! Refreshing a source when its list expires: an MCP server of the stateless revision says how
//! long its `tools/list` stays fresh (`ttlMs`), and the gateway lists that source again then —
//! no sooner than `catalog.min_refresh_seconds` after it last asked it, and no later than
//! `catalog.refresh_seconds` after it was listed (the interval every source is refreshed at
//! anyway). A source that says no lifetime is refreshed on the interval only.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use toolkit_mcp::{ListLifetime, ListLifetimeHandle};

use super::{Gateway, ReadyState, Refresh};

/// The sources whose listings say a lifetime, with when each was last asked.
#[derive(Clone, Debug, Default)]
pub struct Lifetimes {
    sources: Vec<(String, ListLifetimeHandle)>,
    asked: HashMap<String, Instant>,
    floor: Duration,
    ceiling: Duration,
}

impl Lifetimes {
    /// The lifetimes of `sources` (by name), each refresh bounded to `floor..=ceiling` after the
    /// listing.
    pub fn new(
        sources: Vec<(String, ListLifetimeHandle)>,
        floor: Duration,
        ceiling: Duration,
    ) -> Self {
        Self {
            sources,
            asked: HashMap::new(),
            floor: floor.min(ceiling),
            ceiling,
        }
    }

    /// When `source`'s list is due again, by its lifetime, if it said one.
    fn due(&self, source: &str, handle: &ListLifetimeHandle) -> Option<Instant> {
        due_at(
            &handle.get()?,
            self.asked.get(source).copied(),
            self.floor,
            self.ceiling,
        )
    }

    /// When the next list is due, if any source said a lifetime.
    pub fn next_due(&self) -> Option<Instant> {
        self.sources
            .iter()
            .filter_map(|(source, handle)| self.due(source, handle))
            .min()
    }

    /// The sources whose lists are due at `now`, taken as asked then.
    pub fn take_due(&mut self, now: Instant) -> Vec<String> {
        let due: Vec<String> = self
            .sources
            .iter()
            .filter(|(source, handle)| self.due(source, handle).is_some_and(|due| due <= now))
            .map(|(source, _)| source.clone())
            .collect();
        for source in &due {
            self.asked.insert(source.clone(), now);
        }
        due
    }
}

/// When a listing of `lifetime` is due: its ttl after it was listed, bounded to
/// `floor..=ceiling`, and not sooner than `floor` after the source was last `asked` (a refresh
/// that failed, or a server that keeps saying the same).
fn due_at(
    lifetime: &ListLifetime,
    asked: Option<Instant>,
    floor: Duration,
    ceiling: Duration,
) -> Option<Instant> {
    let due = lifetime
        .listed_at
        .checked_add(lifetime.ttl.clamp(floor, ceiling))?;
    Some(match asked.and_then(|asked| asked.checked_add(floor)) {
        Some(again) => due.max(again),
        None => due,
    })
}

/// How long the tools served stay fresh when nothing says sooner: every change is told
/// (`list_changed`) anyway, so this bounds only what a client that does not listen misses.
const SERVED_TTL: Duration = Duration::from_secs(60);

impl Gateway {
    /// How long the tools it serves stay fresh, as it tells its clients (`ttlMs`): the refresh
    /// interval, or the soonest an upstream's listing expires, whichever comes first (a minute
    /// when neither says); and whether that list is private: an upstream said its own was
    /// (`cacheScope: private`, a list for its caller only), which the gateway passes on rather
    /// than let a cache share it. A policy that shows each person their own view makes the list
    /// private too (the server knows that by itself).
    pub fn served_freshness(&self) -> (Duration, bool) {
        let now = Instant::now();
        let listed: Vec<ListLifetime> = self
            .lifetimes
            .iter()
            .filter_map(|(_, handle)| handle.get())
            .collect();
        let soonest = listed
            .iter()
            .map(|lifetime| lifetime.stale_at().saturating_duration_since(now))
            .min();
        let private = listed
            .iter()
            .any(|lifetime| lifetime.scope == Some(toolkit_mcp::CacheScope::Private));
        let ttl = [self.refresh_interval(), soonest]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(SERVED_TTL);
        (ttl, private)
    }

    /// When each source's list expires, bounded by the configuration; `None` when the catalog is
    /// refreshed only at start (`refresh_seconds = 0`).
    pub fn lifetimes(&self) -> Option<Lifetimes> {
        let ceiling = self.refresh_interval()?;
        let floor = Duration::from_secs(self.config.catalog.min_refresh_seconds);
        Some(Lifetimes::new(self.lifetimes.clone(), floor, ceiling))
    }

    /// How soon a source is listed again after it was asked, when it says its lists changed
    /// (`catalog.min_refresh_seconds`).
    pub fn min_refresh(&self) -> Duration {
        Duration::from_secs(self.config.catalog.min_refresh_seconds)
    }

    /// The names of the sources, in order.
    pub fn source_names(&self) -> Vec<String> {
        self.sources
            .iter()
            .map(|(source, _)| source.name().to_owned())
            .collect()
    }

    /// [`refresh`](Self::refresh) for the sources named `names` only: the others keep what they
    /// have, and their readiness as last known.
    pub async fn refresh_sources(&mut self, names: &[String]) -> Refresh {
        let picked: Vec<_> = self
            .sources
            .iter()
            .filter(|(source, _)| names.iter().any(|name| name == source.name()))
            .cloned()
            .collect();
        let (fresh, failures) = self.catalog.refreshed(&picked).await;
        let mut catalog = self.catalog.clone();
        for (source, definitions) in fresh.entries() {
            catalog.set(source, definitions.to_vec());
        }
        let changed = catalog != self.catalog;
        let mut unsaved = None;
        if changed {
            self.catalog = catalog;
            unsaved = self.catalog.save(&self.config.catalog.file).err();
        }
        self.metrics.record_refresh(failures.is_empty());
        let before = self.readiness.get();
        let unreachable = before
            .unreachable
            .into_iter()
            .filter(|source| !names.contains(source))
            .chain(failures.iter().map(|failure| failure.source.clone()))
            .collect();
        self.readiness.set(ReadyState {
            loaded: true,
            sources: self.sources.len(),
            unreachable,
            tools: self.catalog.len(),
            audit: None,
        });
        Refresh {
            failures,
            changed,
            unsaved,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_due_within_the_bounds() {
        let now = Instant::now();
        let (floor, ceiling) = (Duration::from_secs(1), Duration::from_secs(60));
        let listed = |ttl| ListLifetime {
            listed_at: now,
            ttl,
            scope: None,
        };
        let due = |ttl, asked| due_at(&listed(ttl), asked, floor, ceiling).unwrap();
        assert_eq!(
            due(Duration::from_secs(5), None),
            now + Duration::from_secs(5)
        );
        // A huge ttl waits no longer than the interval; a zero one no less than the floor.
        assert_eq!(due(toolkit_mcp::MAX_LIST_TTL, None), now + ceiling);
        assert_eq!(due(Duration::ZERO, None), now + floor);
        // Asked since (and listed the same): not again before the floor.
        let asked = now + Duration::from_secs(30);
        assert_eq!(due(Duration::ZERO, Some(asked)), asked + floor);
        // A source that said no lifetime is never due by it.
        let silent = Lifetimes::new(
            vec![("silent".into(), ListLifetimeHandle::default())],
            floor,
            ceiling,
        );
        assert_eq!(silent.next_due(), None);
    }
}
