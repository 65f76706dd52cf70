//! [`ProgressQueue`]: the progress of a served call waiting to be told to its client, bounded.
//!
//! An upstream may report faster than a client reads (or a client may not read at all while its
//! call runs): at most [`MAX_WAITING`] events wait. When the queue is full, the oldest report
//! that a later report of the same tool supersedes is let go first (reports are cumulative: the
//! latest says all the earlier ones did), then the oldest log or code-mode call, then the oldest
//! event; what was let go is counted in a `tracing` debug event when the call ends.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use toolkit_core::Progress;

/// The most events of one call that wait for its client.
pub(crate) const MAX_WAITING: usize = 64;

/// The events of one call waiting for its client (clones share them): pushed by the call's
/// progress callback, from any thread; taken by the handler that tells the client.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProgressQueue(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    waiting: Mutex<Waiting>,
    /// Told of each event pushed.
    ready: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Waiting {
    events: VecDeque<Progress>,
    /// Reports let go for a later one of the same tool.
    superseded: u64,
    /// Logs let go.
    logs: u64,
    /// Other events let go (code-mode calls, a report no later one said again).
    others: u64,
}

impl ProgressQueue {
    /// Queues `event`, letting an older one go when [`MAX_WAITING`] wait already.
    pub(crate) fn push(&self, event: Progress) {
        let mut waiting = self.waiting();
        if waiting.events.len() >= MAX_WAITING {
            waiting.let_one_go(&event);
        }
        waiting.events.push_back(event);
        drop(waiting);
        self.0.ready.notify_one();
    }

    /// The next event, waiting for one to come.
    pub(crate) async fn next(&self) -> Progress {
        loop {
            if let Some(event) = self.try_next() {
                return event;
            }
            self.0.ready.notified().await;
        }
    }

    /// The next event, if one waits.
    pub(crate) fn try_next(&self) -> Option<Progress> {
        self.waiting().events.pop_front()
    }

    fn waiting(&self) -> MutexGuard<'_, Waiting> {
        self.0
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Waiting {
    /// Lets the event go that loses least, to make room for `coming`.
    fn let_one_go(&mut self, coming: &Progress) {
        // The tools whose report comes later than the one looked at, from the back.
        let mut reported_later: Vec<&str> = Vec::new();
        if let Progress::Reported { tool, .. } = coming {
            reported_later.push(tool);
        }
        let mut superseded = None;
        for (index, event) in self.events.iter().enumerate().rev() {
            if let Progress::Reported { tool, .. } = event {
                if reported_later.contains(&tool.as_str()) {
                    superseded = Some(index);
                } else {
                    reported_later.push(tool);
                }
            }
        }
        if let Some(index) = superseded {
            self.events.remove(index);
            self.superseded += 1;
            return;
        }
        let index = self
            .events
            .iter()
            .position(|event| !matches!(event, Progress::Reported { .. }))
            .unwrap_or(0);
        match self.events.remove(index) {
            Some(Progress::Logged { .. }) => self.logs += 1,
            Some(_) => self.others += 1,
            None => {}
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.superseded + self.logs + self.others > 0 {
            tracing::debug!(
                superseded_reports = self.superseded,
                logs = self.logs,
                others = self.others,
                "a call's client read its progress slower than it came; some was let go"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn report(tool: &str, progress: u64) -> Progress {
        Progress::Reported {
            tool: tool.to_owned(),
            progress: progress.into(),
            total: None,
            message: None,
        }
    }

    fn log(n: u64) -> Progress {
        Progress::Logged {
            tool: "t".to_owned(),
            level: "info".to_owned(),
            logger: None,
            data: n.into(),
        }
    }

    fn drain(queue: &ProgressQueue) -> Vec<Progress> {
        std::iter::from_fn(|| queue.try_next()).collect()
    }

    #[test]
    fn a_client_that_does_not_read_keeps_the_bound_and_the_latest_report() {
        let queue = ProgressQueue::default();
        for step in 1..=100_000 {
            queue.push(report("t", step));
        }
        queue.push(log(1));
        let waiting = drain(&queue);
        assert!(waiting.len() <= MAX_WAITING, "{}", waiting.len());
        assert_eq!(waiting.last(), Some(&log(1)));
        // The latest report is kept, and the reports kept are in order.
        let reports: Vec<_> = waiting
            .iter()
            .filter_map(|event| match event {
                Progress::Reported { progress, .. } => progress.as_u64(),
                _ => None,
            })
            .collect();
        assert_eq!(reports.last(), Some(&100_000));
        assert!(reports.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn a_flood_of_logs_lets_old_logs_go_and_keeps_the_last_report() {
        let queue = ProgressQueue::default();
        queue.push(report("t", 1));
        queue.push(report("t", 2));
        for n in 0..1_000 {
            queue.push(log(n));
        }
        let waiting = drain(&queue);
        assert_eq!(waiting.len(), MAX_WAITING);
        // The superseded report went first, then the oldest logs; the last report stays.
        assert_eq!(waiting[0], report("t", 2));
        assert_eq!(waiting[1], log(1_000 - (MAX_WAITING as u64 - 1)));
        assert_eq!(waiting.last(), Some(&log(999)));
    }

    #[test]
    fn each_tool_keeps_its_latest_report() {
        let queue = ProgressQueue::default();
        queue.push(report("a", 1));
        for step in 1..=200 {
            queue.push(report("b", step));
        }
        let waiting = drain(&queue);
        assert_eq!(waiting.len(), MAX_WAITING);
        assert_eq!(waiting[0], report("a", 1));
        assert_eq!(waiting.last(), Some(&report("b", 200)));
    }

    #[tokio::test]
    async fn next_waits_for_an_event_pushed_from_another_thread() {
        let queue = ProgressQueue::default();
        let pusher = queue.clone();
        let thread = std::thread::spawn(move || pusher.push(report("t", 7)));
        assert_eq!(queue.next().await, report("t", 7));
        thread.join().unwrap();
        assert_eq!(queue.try_next(), None);
    }
}
