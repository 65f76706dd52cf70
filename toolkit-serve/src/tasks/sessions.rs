//! Tasks passed through over Streamable HTTP: [`TaskSessions`], the [`TaskDialect`] of each HTTP
//! session whose client declared `capabilities.tasks` at `initialize`, keyed by its
//! `Mcp-Session-Id`, so that its requests are renamed before rmcp reads them as the stdio
//! transport renames them (`stdio/transport.rs`), and its `initialize` answer gains the `tasks`
//! capability (written in by the answers layer, `http/written_http.rs`).
//!
//! A session's entry is made when rmcp answers its `initialize` with a session id, and dropped
//! when the session ends (`http/session_end.rs`: deleted, expired, or the server shut down), or at
//! its `DELETE`. The stateless revision (2026-07-28, or sessions turned off) has no session to
//! remember a client's `initialize` by, nor to own a task: there, task tools are served as
//! plain tools (its own Tasks extension is another task model, which rmcp speaks itself).
//!
//! A request renamed here is marked ([`Renamed`], in the HTTP request's extensions): a request
//! the client itself wrote with a renamed method is answered as any unknown method is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::CONTENT_LENGTH;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse as _, Response};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::http::session_end::forget_at_end;
use crate::tasks::{Renamed, TaskDialect};

/// The header that names a session.
pub(crate) const SESSION_ID: &str = "mcp-session-id";

/// One session's dialect, shared by its requests.
pub(crate) type SessionDialect = Arc<Mutex<TaskDialect>>;

/// The dialects of the HTTP sessions of clients that declared tasks.
#[derive(Debug, Default)]
pub(crate) struct TaskSessions {
    /// The host gives [`Tasks`](crate::Tasks): else nothing is read or renamed.
    hosted: bool,
    /// The largest request body read (as rmcp's service takes).
    limit: usize,
    /// Each session's dialect, by its session id.
    dialects: Arc<Mutex<HashMap<String, SessionDialect>>>,
}

/// What a request told of its session, to be settled once it is answered
/// ([`TaskSessions::answered`]).
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// The dialect of a client's `initialize` that declared tasks, to be kept when the answer
    /// names the new session.
    initialize: Option<SessionDialect>,
    /// The session a `DELETE` ends.
    deleted: Option<String>,
}

impl TaskSessions {
    /// The sessions of a host that gives tasks (`hosted`) or not, a request body read up to
    /// `limit` bytes.
    pub(crate) fn new(hosted: bool, limit: usize) -> Self {
        Self {
            hosted,
            limit,
            dialects: Arc::default(),
        }
    }

    fn dialects(&self) -> MutexGuard<'_, HashMap<String, SessionDialect>> {
        self.dialects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The dialect of the session `headers` name, if its client declared tasks.
    fn of(&self, headers: &HeaderMap) -> Option<SessionDialect> {
        let id = headers.get(SESSION_ID)?.to_str().ok()?;
        self.dialects().get(id).cloned()
    }

    /// Whether the session `headers` name speaks tasks.
    pub(crate) fn speaks_tasks(&self, headers: &HeaderMap) -> bool {
        self.hosted && self.of(headers).is_some()
    }

    /// Reads a request before rmcp does: a POST of a session whose client declared tasks has its
    /// message renamed ([`TaskDialect::incoming`]); an `initialize` without a session is read for
    /// whether its client declares tasks. Anything else passes untouched. `Err` is the answer to
    /// a body over the limit or that could not be read.
    pub(crate) async fn incoming(&self, request: Request) -> Result<(Request, Pending), Response> {
        let mut pending = Pending::default();
        if !self.hosted {
            return Ok((request, pending));
        }
        if request.method() == Method::DELETE {
            pending.deleted = request
                .headers()
                .get(SESSION_ID)
                .and_then(|id| id.to_str().ok())
                .map(str::to_owned);
            return Ok((request, pending));
        }
        if request.method() != Method::POST {
            return Ok((request, pending));
        }
        let session = self.of(request.headers());
        let starts = request.headers().get(SESSION_ID).is_none();
        if session.is_none() && !starts {
            return Ok((request, pending));
        }
        let (mut parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, self.limit)
            .await
            .map_err(|error| {
                tracing::debug!(%error, "a request body could not be read");
                (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response()
            })?;
        let rewritten = match session {
            Some(dialect) => renamed(&bytes, |message| {
                lock(&dialect).incoming(message);
            })
            .inspect(|_| {
                // Only a request renamed here is answered as a task request.
                parts.extensions.insert(Renamed);
            }),
            // Only an `initialize` starts a session: a body that never names it is not parsed.
            None if memchr::memmem::find(&bytes, b"\"initialize\"").is_some() => {
                let mut dialect = TaskDialect::new(true);
                // An `initialize` is never renamed, nor marked.
                let read = renamed(&bytes, |message| {
                    dialect.incoming(message);
                });
                if dialect.speaks() {
                    pending.initialize = Some(Arc::new(Mutex::new(dialect)));
                }
                read
            }
            None => None,
        };
        let body = match rewritten {
            Some(rewritten) => {
                parts.headers.remove(CONTENT_LENGTH);
                Body::from(rewritten)
            }
            None => Body::from(bytes),
        };
        Ok((Request::from_parts(parts, body), pending))
    }

    /// Settles what a request told once it is answered (`headers`, the answer's): the dialect
    /// of a client that declared tasks is kept under the session the answer names, and dropped
    /// when `ended` is cancelled (the session ended); a deleted session's is dropped. The dialect
    /// kept is returned, for its `initialize` answer to be written ([`TaskDialect::outgoing`]).
    pub(crate) fn answered(
        &self,
        pending: Pending,
        headers: &HeaderMap,
        ended: Option<CancellationToken>,
    ) -> Option<SessionDialect> {
        if let Some(id) = pending.deleted {
            self.dialects().remove(&id);
        }
        let dialect = pending.initialize?;
        let id = headers.get(SESSION_ID)?.to_str().ok()?.to_owned();
        // Without the session's end, an entry could outlive it: such a session is served plain.
        let ended = ended?;
        self.dialects().insert(id.clone(), Arc::clone(&dialect));
        forget_at_end(&self.dialects, id, ended);
        Some(dialect)
    }

    /// How many sessions' dialects are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.dialects().len()
    }
}

/// A dialect, locked.
pub(crate) fn lock(dialect: &SessionDialect) -> MutexGuard<'_, TaskDialect> {
    dialect.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `bytes` (one JSON-RPC message) with `rename` applied, or `None` when it is no JSON or
/// `rename` changed nothing (then it passes as it came).
fn renamed(bytes: &Bytes, rename: impl FnOnce(&mut Value)) -> Option<Vec<u8>> {
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let before = message.get("method").cloned();
    rename(&mut message);
    if message.get("method") == before.as_ref() {
        return None;
    }
    serde_json::to_vec(&message).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn post(session: Option<&str>, body: &str) -> Request {
        let mut request = axum::http::Request::post("http://localhost/mcp");
        if let Some(session) = session {
            request = request.header(SESSION_ID, session);
        }
        request.body(Body::from(body.to_owned())).unwrap()
    }

    async fn body(request: Request) -> Value {
        let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    }

    #[tokio::test]
    async fn a_session_that_declared_tasks_is_renamed_until_it_ends() {
        let sessions = TaskSessions::new(true, 1 << 20);
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"capabilities": {"tasks": {}}}});
        let (_, pending) = sessions
            .incoming(post(None, &initialize.to_string()))
            .await
            .unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(SESSION_ID, "s1".parse().unwrap());
        let ended = CancellationToken::new();
        assert!(
            sessions
                .answered(pending, &headers, Some(ended.clone()))
                .is_some()
        );
        let get = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
            "params": {"taskId": "x"}})
        .to_string();
        let (request, _) = sessions.incoming(post(Some("s1"), &get)).await.unwrap();
        assert!(request.extensions().get::<Renamed>().is_some(), "marked");
        assert_eq!(body(request).await["method"], "toolkit-tasks:tasks/get");
        // Another session, one unknown, malformed JSON, a renamed method the client wrote:
        // untouched, unmarked.
        let written = json!({"jsonrpc": "2.0", "id": 1, "method": "toolkit-tasks:tasks/get",
            "params": {"taskId": "x"}})
        .to_string();
        for (session, sent) in [
            (Some("s2"), get.as_str()),
            (Some("s1"), "{not json"),
            (Some("s1"), written.as_str()),
        ] {
            let (request, _) = sessions.incoming(post(session, sent)).await.unwrap();
            assert!(
                request.extensions().get::<Renamed>().is_none(),
                "not marked"
            );
            let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
                .await
                .unwrap();
            assert_eq!(bytes, sent.as_bytes());
        }
        ended.cancel();
        for _ in 0..100 {
            if sessions.len() == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(sessions.len(), 0, "the ended session's dialect is dropped");
        let (request, _) = sessions.incoming(post(Some("s1"), &get)).await.unwrap();
        assert_eq!(body(request).await["method"], "tasks/get");

        // A DELETE drops the session's dialect at once.
        let (_, pending) = sessions
            .incoming(post(None, &initialize.to_string()))
            .await
            .unwrap();
        let kept = CancellationToken::new();
        assert!(sessions.answered(pending, &headers, Some(kept)).is_some());
        assert_eq!(sessions.len(), 1);
        let delete = axum::http::Request::delete("http://localhost/mcp")
            .header(SESSION_ID, "s1")
            .body(Body::empty())
            .unwrap();
        let (_, pending) = sessions.incoming(delete).await.unwrap();
        assert!(
            sessions
                .answered(pending, &HeaderMap::new(), None)
                .is_none()
        );
        assert_eq!(sessions.len(), 0);
    }

    #[tokio::test]
    async fn a_client_that_declares_no_tasks_or_a_body_too_large_is_not_kept() {
        let sessions = TaskSessions::new(true, 128);
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"capabilities": {}}});
        let (_, pending) = sessions
            .incoming(post(None, &initialize.to_string()))
            .await
            .unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(SESSION_ID, "s1".parse().unwrap());
        let ended = CancellationToken::new();
        assert!(sessions.answered(pending, &headers, Some(ended)).is_none());
        assert_eq!(sessions.len(), 0);
        let large = post(None, &format!("\"initialize\"{}", " ".repeat(200)));
        let refused = sessions.incoming(large).await.unwrap_err();
        assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    }
}
