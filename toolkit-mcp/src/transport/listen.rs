//! `subscriptions/listen` (the stateless revision, 2026-07-28): a long-lived POST whose event
//! stream carries the notifications the client opted in to — here only
//! `notifications/tools/list_changed`, which wakes [`ToolsChanged`](crate::ToolsChanged).
//!
//! Opened once the server is found to speak the revision, and only while someone waits for its
//! tools to change. A server that refuses it (a JSON-RPC error, no event stream) is left alone;
//! a stream it ends is opened again after a pause, a bounded number of times in a row without a
//! notification.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::json;

use super::Agreed;
use super::body;
use super::shared::{Shared, headers_for};
use super::standalone::Standalone;
use crate::changes::says_a_list_changed;
use crate::jsonrpc::{self, Incoming};
use crate::revision;

/// The method.
const LISTEN: &str = "subscriptions/listen";
/// The most times in a row the stream is opened again when it ends without a notification.
const MAX_REOPENS: usize = 5;
/// How long to wait before opening it again.
const REOPEN_WAIT: Duration = Duration::from_secs(1);

/// Listens in the background, when someone waits for the server's tools to change; `None`
/// otherwise, or outside a runtime.
pub(crate) fn listen(shared: Arc<Shared>, settled: Agreed) -> Option<Standalone> {
    if !shared.changes.watched() {
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let reader = runtime.spawn(read(shared, settled));
    Some(Standalone::of(reader.abort_handle()))
}

/// Opens the subscription, reads it, and opens it again while the server keeps taking it.
async fn read(shared: Arc<Shared>, settled: Agreed) {
    let mut empty_in_a_row = 0;
    loop {
        let Some(response) = open(&shared, &settled).await else {
            return;
        };
        let mut events = body::events_per_event(response, shared.options.max_response_bytes);
        let mut heard = false;
        let mut answered = false;
        while let Some(event) = events.next().await {
            let Ok(event) = event else {
                break;
            };
            if event.data.trim().is_empty() {
                continue;
            }
            let Ok(messages) = body::messages_of(&event.data, &shared.progress) else {
                tracing::debug!("the subscription carried an event that is not JSON");
                continue;
            };
            for message in messages {
                match message {
                    Incoming::Notification { method, .. } if says_a_list_changed(&method) => {
                        heard = true;
                        shared.changes.tell();
                    }
                    // The acknowledgement, and anything else: the stream is taken.
                    Incoming::Notification { .. } => heard = true,
                    // The answer ends the subscription (the server refused or closed it).
                    Incoming::Response { .. } => answered = true,
                    // The revision has the server send no requests.
                    Incoming::Request(_) => {}
                }
            }
            if answered {
                break;
            }
        }
        if answered && !heard {
            tracing::debug!("the server refused subscriptions/listen; not listened to");
            return;
        }
        empty_in_a_row = if heard { 0 } else { empty_in_a_row + 1 };
        if empty_in_a_row >= MAX_REOPENS {
            tracing::debug!("the subscription keeps ending without a notification; left closed");
            return;
        }
        tokio::time::sleep(REOPEN_WAIT).await;
    }
}

/// The POST that opens the subscription; `None` when the server takes none.
async fn open(shared: &Shared, settled: &Agreed) -> Option<reqwest::Response> {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let mut params = serde_json::Map::new();
    params.insert("notifications".into(), json!({ "toolsListChanged": true }));
    let message = jsonrpc::request(id, LISTEN, revision::with_modern_meta(params));
    let builder = headers_for(
        shared.client.post(shared.url.clone()),
        settled,
        None,
        LISTEN,
        None,
    )
    .json(&message);
    shared
        .open_event_stream(builder, "subscriptions/listen")
        .await
}
