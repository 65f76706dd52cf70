//! The sources that said their lists changed (an MCP server's `notifications/tools/list_changed`,
//! or of its resources or prompts), and when each is listed again: that source only, no sooner
//! than `catalog.min_refresh_seconds` after it was last asked, and once however often it said it
//! in between. The change is not lost: a change heard while a source is being listed, or before
//! its floor, is listed after the floor.
//!
//! A source that floods its `list_changed` so costs one listing of itself per floor, and none of
//! the other sources.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use toolkit_mcp::ToolsChanged;

/// The changes heard and not yet listed, by source, and when each source was last asked.
#[derive(Debug)]
pub struct ChangedSources {
    heard: Arc<Heard>,
    /// The sources heard to change, waiting for their floor.
    pending: BTreeSet<String>,
    /// When each source was last asked for its lists.
    asked: HashMap<String, Instant>,
    floor: Duration,
}

/// What the waiters of the sources' changes tell, shared with them.
#[derive(Debug, Default)]
struct Heard {
    sources: Mutex<BTreeSet<String>>,
    wake: Notify,
}

impl Heard {
    fn tell(&self, source: &str) {
        self.sources
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(source.to_owned());
        self.wake.notify_one();
    }

    fn take(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.sources.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl ChangedSources {
    /// Nothing heard yet; each source listed again no sooner than `floor` after it was asked.
    pub fn new(floor: Duration) -> Self {
        Self {
            heard: Arc::default(),
            pending: BTreeSet::new(),
            asked: HashMap::new(),
            floor,
        }
    }

    /// Hears `changes` (each with its source's name) from tasks of their own, on the current
    /// runtime, until each source is gone.
    pub fn hear(&self, changes: Vec<(String, ToolsChanged)>) {
        for (source, mut waiter) in changes {
            let heard = Arc::clone(&self.heard);
            tokio::spawn(async move {
                while waiter.changed().await {
                    heard.tell(&source);
                }
            });
        }
    }

    /// Tells that `source` said its lists changed (what [`hear`](Self::hear)'s tasks do).
    pub fn heard(&self, source: &str) {
        self.heard.tell(source);
    }

    /// Completes when a change is heard (at once if one was heard since the last wake), borrowing
    /// nothing: the refresh loop waits on it beside the listings it makes.
    pub fn woken(&self) -> impl Future<Output = ()> + Send + 'static {
        let heard = Arc::clone(&self.heard);
        async move { heard.wake.notified().await }
    }

    /// Moves what was heard to what waits for its floor.
    fn gather(&mut self) {
        let heard = self.heard.take();
        self.pending.extend(heard);
    }

    /// When the next listing of a source heard to change is due, if one was heard: its floor
    /// after it was last asked, or `now` for a source not asked since the floor passed.
    pub fn next_due(&mut self, now: Instant) -> Option<Instant> {
        self.gather();
        self.pending
            .iter()
            .map(|source| self.due(source, now))
            .min()
    }

    fn due(&self, source: &str, now: Instant) -> Instant {
        self.asked
            .get(source)
            .and_then(|asked| asked.checked_add(self.floor))
            .map_or(now, |due| due.max(now))
    }

    /// The sources heard to change whose floor has passed at `now`, taken as asked then.
    pub fn take_due(&mut self, now: Instant) -> Vec<String> {
        self.gather();
        let due: Vec<String> = self
            .pending
            .iter()
            .filter(|source| self.due(source, now) <= now)
            .cloned()
            .collect();
        self.asking(&due, now);
        due
    }

    /// `sources` are asked for their lists at `now` (by a change, their lifetime or the
    /// interval): a change heard before is listed by it, one heard from now on waits for the
    /// floor after `now`.
    pub fn asking(&mut self, sources: &[String], now: Instant) {
        self.gather();
        for source in sources {
            self.pending.remove(source);
            self.asked.insert(source.clone(), now);
        }
    }
}

#[cfg(test)]
mod flood;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_changes_costs_one_listing_of_its_source_per_floor() {
        let floor = Duration::from_secs(10);
        let start = Instant::now();
        let mut changed = ChangedSources::new(floor);
        let sources = ["flood".to_owned(), "quiet".to_owned()];
        changed.asking(&sources, start);

        // A thousand changes heard in the floor after the start: none listed before it.
        let mut listed = Vec::new();
        for tenth in 0..1_000u32 {
            let now = start + Duration::from_millis(u64::from(tenth) * 5);
            changed.heard("flood");
            listed.extend(changed.take_due(now));
        }
        assert_eq!(listed, Vec::<String>::new());
        assert_eq!(changed.next_due(start), Some(start + floor));

        // At the floor, one listing of that source, and of no other.
        assert_eq!(changed.take_due(start + floor), vec!["flood".to_owned()]);
        assert_eq!(changed.take_due(start + floor), Vec::<String>::new());
        assert_eq!(changed.next_due(start + floor), None);

        // A change heard while it was listed is not lost: listed at the next floor.
        changed.heard("flood");
        assert_eq!(
            changed.take_due(start + floor + floor / 2),
            Vec::<String>::new()
        );
        assert_eq!(changed.next_due(start + floor), Some(start + floor * 2));
        assert_eq!(
            changed.take_due(start + floor * 2),
            vec!["flood".to_owned()]
        );
    }

    #[test]
    fn a_change_after_a_quiet_floor_is_listed_at_once_and_a_listing_for_another_reason_takes_it() {
        let floor = Duration::from_secs(10);
        let start = Instant::now();
        let mut changed = ChangedSources::new(floor);
        changed.asking(&["a".to_owned(), "b".to_owned()], start);

        // Quiet for longer than the floor: due at once.
        let later = start + floor * 3;
        changed.heard("a");
        assert_eq!(changed.next_due(later), Some(later));
        assert_eq!(changed.take_due(later), vec!["a".to_owned()]);

        // A change heard before the interval lists every source is listed by it.
        changed.heard("b");
        changed.asking(
            &["a".to_owned(), "b".to_owned()],
            later + Duration::from_secs(1),
        );
        assert_eq!(changed.next_due(later + floor * 5), None);

        // A source never asked is due at once.
        changed.heard("new");
        assert_eq!(changed.take_due(later), vec!["new".to_owned()]);
    }
}
