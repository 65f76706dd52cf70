//! [`EventLog`]: the events the gateway received for one event type it serves itself (a
//! webhook of an API's, `webhook_inbox.rs`, or a webhook subscription at an MCP source,
//! `event_webhooks.rs`), kept for polls and passed to push streams.
//!
//! Each event taken gets the next number; its cursor is the log's epoch (random, made with the
//! log) and the number, served under a prefix (the source's for a subscription). The last `keep`
//! are kept, and a poll from a cursor older than the oldest kept says `truncated`, as does one of
//! another epoch (a log made since: the events between are not known). Each event id is taken
//! once (the last [`SEEN_IDS`] remembered): a sender's retry is answered as taken and not kept
//! twice. A stream is told the gateway is alive every [`HEARTBEAT`], and `terminated` when the
//! log is closed.

use std::collections::{HashSet, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use toolkit_core::JsonObject;
use toolkit_serve::{EventFeed, Refusal};

/// How many event ids are remembered per log, to take each once.
pub(crate) const SEEN_IDS: usize = 10_000;

/// How many events wait for a push stream's client before its forwarding waits.
const FEED: usize = 64;

/// How often a push stream's client is told the gateway is alive.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(15);

/// One event type's events, as received.
pub(crate) struct EventLog {
    /// The most events kept.
    keep: usize,
    /// What the cursors it hands out begin with (`SOURCE/`, or nothing), and its epoch.
    prefix: String,
    epoch: String,
    state: Mutex<Received>,
    /// Each event taken, by number; `Null` for a gap.
    pushed: broadcast::Sender<(u64, Value)>,
    closed: CancellationToken,
}

/// What one log keeps.
#[derive(Default)]
struct Received {
    /// The events kept, by number.
    events: VecDeque<(u64, Value)>,
    /// The number of the last event taken.
    last: u64,
    seen: HashSet<String>,
    seen_order: VecDeque<String>,
}

impl EventLog {
    /// A log keeping `keep` events (at least one), its cursors written after `prefix`.
    pub(crate) fn new(keep: usize, prefix: impl Into<String>) -> Self {
        let random = toolkit_core::random::hex_128().unwrap_or_default();
        Self {
            keep: keep.max(1),
            prefix: prefix.into(),
            epoch: random.get(..8).unwrap_or("0").to_owned(),
            state: Mutex::new(Received::default()),
            pushed: broadcast::channel(FEED).0,
            closed: CancellationToken::new(),
        }
    }

    /// Ends its streams (told `terminated`): nothing more comes to it.
    pub(crate) fn close(&self) {
        self.closed.cancel();
    }

    /// Takes the event of id `id` that `event` makes from its cursor; `false` when that id was
    /// taken before (nothing kept then).
    pub(crate) fn take(&self, id: &str, event: impl FnOnce(String) -> Value) -> bool {
        let mut kept = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.seen.contains(id) {
            return false;
        }
        kept.seen.insert(id.to_owned());
        kept.seen_order.push_back(id.to_owned());
        if kept.seen_order.len() > SEEN_IDS
            && let Some(oldest) = kept.seen_order.pop_front()
        {
            kept.seen.remove(&oldest);
        }
        kept.last += 1;
        let number = kept.last;
        let event = event(self.cursor(number));
        kept.events.push_back((number, event.clone()));
        while kept.events.len() > self.keep {
            kept.events.pop_front();
        }
        drop(kept);
        let _ = self.pushed.send((number, event));
        true
    }

    /// Marks that events were skipped before the next one (the sender said so): a poll or a
    /// stream from before now reads `truncated`.
    pub(crate) fn skip(&self) {
        let mut kept = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        kept.last += 1;
        let number = kept.last;
        drop(kept);
        let _ = self.pushed.send((number, Value::Null));
    }

    fn cursor(&self, number: u64) -> String {
        format!("{}{}.{number}", self.prefix, self.epoch)
    }

    /// The number `cursor` (without the prefix) stands for, and whether it is of another epoch
    /// (read from the start, with `truncated`).
    fn read_cursor(&self, cursor: Option<&str>) -> Result<Option<(u64, bool)>, Refusal> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let read = cursor
            .split_once('.')
            .and_then(|(epoch, number)| Some((epoch, number.parse::<u64>().ok()?)));
        match read {
            Some((epoch, number)) if epoch == self.epoch => Ok(Some((number, false))),
            Some(_) => Ok(Some((0, true))),
            None => Err(Refusal::InvalidParams(
                "The cursor is not one of this event type's: poll from null to start anew.".into(),
            )),
        }
    }

    /// `events/poll` from `cursor` (an event's number, as the client gave it without the
    /// prefix; none: from now).
    pub(crate) fn poll(&self, cursor: Option<&str>) -> Result<JsonObject, Refusal> {
        let from = self.read_cursor(cursor)?;
        let kept = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (events, truncated) = match from {
            None => (Vec::new(), false),
            Some((from, foreign)) => {
                let (events, truncated) = since(&kept, from);
                (events, truncated || foreign)
            }
        };
        let mut result = JsonObject::new();
        result.insert("events".into(), Value::Array(events));
        result.insert("cursor".into(), json!(self.cursor(kept.last)));
        result.insert("truncated".into(), json!(truncated));
        result.insert("hasMore".into(), json!(false));
        result.insert("resultType".into(), json!("complete"));
        Ok(result)
    }

    /// `events/stream` from `cursor`: the kept events after it, then each new one as it is
    /// taken; a client too slow for [`FEED`] events is told `truncated`.
    pub(crate) fn stream(&self, cursor: Option<&str>) -> Result<EventFeed, Refusal> {
        let from = self.read_cursor(cursor)?;
        let mut pushed = self.pushed.subscribe();
        let (replay, truncated, last) = {
            let kept = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let (events, truncated) = from.map_or((Vec::new(), false), |(from, foreign)| {
                let (events, truncated) = since(&kept, from);
                (events, truncated || foreign)
            });
            (events, truncated, kept.last)
        };
        let prefix = format!("{}{}.", self.prefix, self.epoch);
        let cursor_of = move |number: u64| format!("{prefix}{number}");
        let closed = self.closed.clone();
        let (sender, feed) = tokio::sync::mpsc::channel(FEED);
        tokio::spawn(async move {
            let told = |method: &str, params: Value| match params {
                Value::Object(params) => Some((method.to_owned(), params)),
                _ => None,
            };
            let mut first = vec![told(
                "notifications/events/active",
                json!({ "cursor": cursor_of(last), "truncated": truncated }),
            )];
            first.extend(
                replay
                    .into_iter()
                    .map(|event| told("notifications/events/event", event)),
            );
            let mut sent = last;
            for message in first.into_iter().flatten() {
                if sender.send(message).await.is_err() {
                    return;
                }
            }
            let mut beats =
                tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
            loop {
                let message = tokio::select! {
                    () = sender.closed() => return,
                    () = closed.cancelled() => {
                        let ended = json!({ "error": { "code": -32603,
                            "message": "The subscription ended at its source." } });
                        if let Some(message) = told("notifications/events/terminated", ended) {
                            let _ = sender.send(message).await;
                        }
                        return;
                    }
                    _ = beats.tick() => told(
                        "notifications/events/heartbeat",
                        json!({ "cursor": cursor_of(sent) }),
                    ),
                    next = pushed.recv() => match next {
                        Ok((number, Value::Null)) if number > sent => {
                            sent = number;
                            told(
                                "notifications/events/active",
                                json!({ "cursor": cursor_of(sent), "truncated": true }),
                            )
                        }
                        Ok((number, event)) if number > sent => {
                            sent = number;
                            told("notifications/events/event", event)
                        }
                        Ok(_) => None,
                        Err(broadcast::error::RecvError::Lagged(_)) => told(
                            "notifications/events/active",
                            json!({ "cursor": cursor_of(sent), "truncated": true }),
                        ),
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                };
                if let Some(message) = message
                    && sender.send(message).await.is_err()
                {
                    return;
                }
            }
        });
        Ok(feed)
    }
}

/// The events kept after `from`, and whether some after it are not among them (no longer kept,
/// or skipped by their sender).
fn since(kept: &Received, from: u64) -> (Vec<Value>, bool) {
    let events: Vec<Value> = kept
        .events
        .iter()
        .filter(|(number, _)| *number > from)
        .map(|(_, event)| event.clone())
        .collect();
    let truncated = from < kept.last && (events.len() as u64) < kept.last - from;
    (events, truncated)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn taken(log: &EventLog, id: &str) -> bool {
        log.take(id, |cursor| json!({ "eventId": id, "cursor": cursor }))
    }

    #[test]
    fn each_id_is_taken_once_and_the_oldest_ids_are_forgotten_past_the_cap() {
        let log = EventLog::new(4, "");
        assert!(taken(&log, "first"));
        assert!(!taken(&log, "first"), "a retry is not kept twice");
        for number in 0..SEEN_IDS {
            assert!(taken(&log, &number.to_string()));
        }
        // "first" was the oldest remembered: past the cap it is forgotten, taken again.
        assert!(taken(&log, "first"));
        assert!(!taken(&log, &(SEEN_IDS - 1).to_string()));
        let state = log.state.lock().unwrap();
        assert_eq!(state.seen.len(), SEEN_IDS);
        assert_eq!(state.events.len(), 4, "only the last `keep` events kept");
    }

    #[test]
    fn a_poll_from_an_old_cursor_across_a_skip_or_of_another_log_says_truncated() {
        let log = EventLog::new(2, "src/");
        let at = |number: u64| format!("{}.{number}", log.epoch);
        let start = log.poll(None).unwrap();
        assert_eq!(start["cursor"], format!("src/{}", at(0)));
        for id in ["a", "b", "c"] {
            taken(&log, id);
        }
        let old = log.poll(Some(&at(0))).unwrap();
        assert_eq!(old["truncated"], true);
        assert_eq!(old["events"].as_array().unwrap().len(), 2);
        assert_eq!(old["cursor"], format!("src/{}", at(3)));
        let now = log.poll(Some(&at(3))).unwrap();
        assert_eq!(now["truncated"], false);
        log.skip();
        taken(&log, "d");
        let skipped = log.poll(Some(&at(3))).unwrap();
        assert_eq!(skipped["truncated"], true, "{skipped:?}");
        // A cursor of a log made before this one (a subscription ended and made again): what
        // this one keeps, and `truncated`.
        let other = EventLog::new(2, "src/");
        let before = other.poll(Some(&at(4))).unwrap();
        assert_eq!(before["truncated"], true, "{before:?}");
        assert!(matches!(
            log.poll(Some("x")),
            Err(Refusal::InvalidParams(_))
        ));
    }

    /// A gap the sender tells, and the log's close, reach an open stream.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_hears_a_gap_and_the_end() {
        let log = EventLog::new(10, "");
        let mut feed = log.stream(None).unwrap();
        let next = async |feed: &mut EventFeed| {
            tokio::time::timeout(std::time::Duration::from_secs(5), feed.recv())
                .await
                .unwrap()
                .unwrap()
        };
        assert_eq!(next(&mut feed).await.0, "notifications/events/active");
        log.skip();
        let (method, gap) = next(&mut feed).await;
        assert_eq!(method, "notifications/events/active");
        assert_eq!(gap["truncated"], true);
        log.close();
        assert_eq!(next(&mut feed).await.0, "notifications/events/terminated");
        assert!(feed.recv().await.is_none());
    }

    /// Ids taken from many threads at once: each event once, numbered without a gap.
    #[test]
    fn events_taken_at_once_from_many_threads_are_each_kept_once() {
        let log = EventLog::new(100_000, "");
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for id in 0..2_000 {
                        taken(&log, &id.to_string());
                    }
                });
            }
        });
        let state = log.state.lock().unwrap();
        assert_eq!(state.last, 2_000);
        let numbers: Vec<u64> = state.events.iter().map(|(number, _)| *number).collect();
        assert_eq!(numbers, (1..=2_000).collect::<Vec<_>>());
    }

    /// A stream whose client does not read while hundreds of events come: the events past what
    /// waits for it are dropped, and it is told `truncated` before the next ones.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_too_slow_for_its_events_is_told_truncated() {
        let log = EventLog::new(1_000, "");
        let mut feed = log.stream(None).unwrap();
        for id in 0..500 {
            taken(&log, &id.to_string());
        }
        // Then one more, once the stream's waiting room has been read.
        let mut told = Vec::new();
        while let Ok(Some(message)) =
            tokio::time::timeout(std::time::Duration::from_millis(300), feed.recv()).await
        {
            told.push(message);
        }
        let events = told
            .iter()
            .filter(|(method, _)| method == "notifications/events/event");
        assert!(events.count() < 500, "some were dropped");
        let gap = told.iter().position(|(method, params)| {
            method == "notifications/events/active" && params["truncated"] == true
        });
        assert!(gap.is_some(), "the gap is told: {:?}", told.len());
        taken(&log, "after");
        let (method, event) = tokio::time::timeout(std::time::Duration::from_secs(5), feed.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(method, "notifications/events/event");
        assert_eq!(event["eventId"], "after");
    }
}
