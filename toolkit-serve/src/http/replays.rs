//! What a resumed stream replays, as it was first written: [`Replays`].
//!
//! rmcp keeps the last events of each stream of a session (16 a stream; a finished call's for a
//! minute) and sends those after the client's `Last-Event-ID` again when the client resumes
//! (`GET` with that header), written anew from its typed messages: a result written in by the
//! answers layer (`http/written_http.rs`) would come back in rmcp's typed form (`1` as `1.0`, fields
//! it has no type for gone). So the layer keeps each event it rewrote of a stream the client may
//! resume, by session and event id, and a resumed stream's event with a kept id is sent as first
//! written.
//!
//! A call whose stream the client lost goes on, and its later events reach the resumed stream:
//! they are written from the call's own slot ([`AsWritten`]), found by the session and the stream's
//! id (an event id's part after its `/`) while the call runs. (rmcp 3.11 forgets a call's stream
//! once the call has answered, so a stream is resumed only while its call runs.)
//!
//! Bounded: only the events of streams that stopped short of their call's answer are kept (one
//! that carried it is not resumed; `http/written_http.rs` hands them over then), per session the last [`MAX_EVENTS`] events and [`MAX_BYTES`] bytes, none older
//! than [`MAX_AGE`]; a session's are dropped when it ends. An event no longer kept is replayed as
//! rmcp writes it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use tokio_util::sync::CancellationToken;

use crate::http::as_written::{AsWritten, WeakAsWritten};
use crate::http::session_end::forget_at_end;

/// The most events kept per session.
pub(crate) const MAX_EVENTS: usize = 64;
/// The most bytes of events kept per session.
pub(crate) const MAX_BYTES: usize = 4 * 1024 * 1024;
/// How long an event is kept.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(65);

/// The events the answers layer rewrote, by session, to be replayed as written.
#[derive(Debug, Default)]
pub(crate) struct Replays {
    sessions: Arc<Mutex<HashMap<String, Session>>>,
}

/// One session's kept events, oldest first, and the slots of its calls by stream id.
#[derive(Debug, Default)]
struct Session {
    events: VecDeque<Event>,
    bytes: usize,
    calls: HashMap<String, WeakAsWritten>,
}

/// One event as written, with its id and when it was written.
#[derive(Debug)]
struct Event {
    id: String,
    written: Bytes,
    at: Instant,
}

impl Replays {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `written`, the whole event of id `id` as sent in `session`, for a resumed stream.
    pub(crate) fn keep(&self, session: &str, id: &str, written: Bytes) {
        if written.len() > MAX_BYTES {
            return;
        }
        let now = Instant::now();
        let mut sessions = self.sessions();
        let kept = sessions.entry(session.to_owned()).or_default();
        kept.bytes += written.len();
        kept.events.push_back(Event {
            id: id.to_owned(),
            written,
            at: now,
        });
        while kept.events.len() > MAX_EVENTS
            || kept.bytes > MAX_BYTES
            || kept
                .events
                .front()
                .is_some_and(|event| now.duration_since(event.at) > MAX_AGE)
        {
            if let Some(gone) = kept.events.pop_front() {
                kept.bytes -= gone.written.len();
            }
        }
    }

    /// Remembers `kept`, the slot of the call whose answer is the stream `stream` of `session`,
    /// while the call runs (the slots of calls that have ended are forgotten here).
    pub(crate) fn call(&self, session: &str, stream: &str, kept: &AsWritten) {
        let mut sessions = self.sessions();
        let calls = &mut sessions.entry(session.to_owned()).or_default().calls;
        calls.retain(|_, kept| !kept.is_gone());
        calls.insert(stream.to_owned(), kept.downgrade());
    }

    /// The slot of the call whose answer is the stream `stream` of `session`, while it runs.
    pub(crate) fn call_of(&self, session: &str, stream: &str) -> Option<AsWritten> {
        self.sessions().get(session)?.calls.get(stream)?.upgrade()
    }

    /// The event of id `id` of `session` as first written, if it is kept.
    pub(crate) fn written(&self, session: &str, id: &str) -> Option<Bytes> {
        let sessions = self.sessions();
        let kept = sessions.get(session)?;
        kept.events
            .iter()
            .rev()
            .find(|event| event.id == id && event.at.elapsed() <= MAX_AGE)
            .map(|event| event.written.clone())
    }

    /// Drops what `session` kept once `ended` is cancelled (the session ended).
    pub(crate) fn drop_at(&self, session: String, ended: CancellationToken) {
        forget_at_end(&self.sessions, session, ended);
    }

    /// Drops what `session` kept (its `DELETE`).
    pub(crate) fn end(&self, session: &str) {
        self.sessions().remove(session);
    }

    /// How many events `session` keeps.
    #[cfg(test)]
    fn len(&self, session: &str) -> usize {
        self.sessions()
            .get(session)
            .map_or(0, |kept| kept.events.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn an_event_is_kept_by_session_and_id_and_the_oldest_go_first() {
        let replays = Replays::default();
        for n in 0..MAX_EVENTS + 3 {
            replays.keep("a", &format!("{n}/1"), Bytes::from(format!("event {n}")));
        }
        replays.keep("b", "0/1", Bytes::from_static(b"of b"));
        assert_eq!(replays.len("a"), MAX_EVENTS);
        assert_eq!(replays.written("a", "0/1"), None, "the oldest went");
        assert_eq!(
            replays.written("a", "3/1").as_deref(),
            Some(&b"event 3"[..])
        );
        assert_eq!(replays.written("b", "0/1").as_deref(), Some(&b"of b"[..]));
        assert_eq!(replays.written("c", "0/1"), None);
        replays.end("a");
        assert_eq!(replays.len("a"), 0);
    }

    #[test]
    fn the_bytes_kept_per_session_are_bounded() {
        let replays = Replays::default();
        let big = Bytes::from(vec![b'x'; MAX_BYTES / 2 + 1]);
        replays.keep("a", "0/1", big.clone());
        replays.keep("a", "1/1", big.clone());
        assert_eq!(replays.len("a"), 1);
        assert_eq!(replays.written("a", "0/1"), None);
        replays.keep("a", "2/1", Bytes::from(vec![b'x'; MAX_BYTES + 1]));
        assert_eq!(replays.written("a", "2/1"), None, "too big to keep");
    }

    #[test]
    fn a_call_s_slot_is_found_while_it_runs() {
        let replays = Replays::default();
        let kept = AsWritten::default();
        replays.call("a", "4", &kept);
        assert!(replays.call_of("a", "4").is_some());
        assert!(replays.call_of("a", "5").is_none());
        assert!(replays.call_of("b", "4").is_none());
        drop(kept);
        assert!(replays.call_of("a", "4").is_none(), "the call has ended");
        replays.call("a", "6", &AsWritten::default());
        assert_eq!(
            replays.sessions()["a"].calls.len(),
            1,
            "ended calls are forgotten"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sessions_racing_to_keep_read_and_end_stay_within_their_bounds() {
        let replays = Arc::new(Replays::default());
        let mut racing = Vec::new();
        for task in 0..8 {
            let replays = Arc::clone(&replays);
            racing.push(tokio::spawn(async move {
                let own = format!("s{task}");
                for n in 0..200 {
                    let event = Bytes::from(format!("{task}:{n}"));
                    replays.keep(&own, &format!("{n}/1"), event.clone());
                    replays.keep("shared", &format!("{n}/{task}"), event.clone());
                    assert_eq!(replays.written(&own, &format!("{n}/1")), Some(event));
                    let kept = AsWritten::default();
                    replays.call("shared", &task.to_string(), &kept);
                    assert!(replays.call_of("shared", &task.to_string()).is_some());
                    if n % 50 == 49 {
                        replays.end(&own);
                    }
                    tokio::task::yield_now().await;
                }
            }));
        }
        for task in racing {
            task.await.unwrap();
        }
        let sessions = replays.sessions();
        for (name, kept) in sessions.iter() {
            assert!(kept.events.len() <= MAX_EVENTS, "{name}");
            let bytes: usize = kept.events.iter().map(|event| event.written.len()).sum();
            assert_eq!(
                kept.bytes, bytes,
                "{name}: the count of bytes kept is exact"
            );
        }
        assert_eq!(sessions["shared"].events.len(), MAX_EVENTS);
    }

    #[tokio::test]
    async fn a_session_s_events_are_dropped_when_it_ends() {
        let replays = Replays::default();
        replays.keep("a", "0/1", Bytes::from_static(b"x"));
        let ended = CancellationToken::new();
        replays.drop_at("a".to_owned(), ended.clone());
        ended.cancel();
        for _ in 0..100 {
            if replays.len("a") == 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(
            replays.len("a"),
            0,
            "the ended session's events are still kept"
        );
    }
}
