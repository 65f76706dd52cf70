//! The progress of a served call told to its client as `notifications/progress`: [`ProgressSent`] and
//! [`notify`]. An upstream's numbers reach the client as the upstream wrote them (`1` stays `1`,
//! `12345678901234567890` keeps its digits), which rmcp's typed notification (an `f64`) cannot
//! carry: the notification is sent as written wherever it rides the call's one stream (stdio,
//! the stateless revision over HTTP). In a session over HTTP rmcp routes progress to the call's
//! stream by its typed notification, so that one is sent, and its params as written are kept in
//! the HTTP request's slot, for the layer around the service to write into the answer in its
//! place (`http/written_http.rs`).

use axum::http::request::Parts;
use rmcp::RoleServer;
use rmcp::model::{
    CustomNotification, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerNotification,
};
use rmcp::service::RequestContext;
use serde_json::{Map, Number, Value};

use crate::http::as_written::AsWritten;
use toolkit_core::Progress;

/// The most bytes of JSON a client's progress token may take: each report told to the client
/// carries a copy (and over HTTP one is kept until it is written), so a longer token is refused.
pub(crate) const MAX_TOKEN_BYTES: usize = 256;

/// Whether `token` is longer than [`MAX_TOKEN_BYTES`] as JSON (a call that gives one is refused
/// with `-32602`, before it runs).
pub(crate) fn too_long(token: &ProgressToken) -> bool {
    // A string's JSON is at least its length and two quotes: a long one is not written out.
    if let rmcp::model::NumberOrString::String(text) = &token.0
        && text.len() > MAX_TOKEN_BYTES
    {
        return true;
    }
    serde_json::to_vec(token).map_or(true, |json| json.len() > MAX_TOKEN_BYTES)
}

/// The progress told so far of one call: the last value sent.
#[derive(Debug, Default)]
pub(crate) struct ProgressSent {
    /// The last progress value sent, if any was.
    last: Option<f64>,
}

impl ProgressSent {
    /// One more than the last value sent (1 for the first).
    fn next(&self) -> Number {
        number(self.last.map_or(1.0, |last| last + 1.0))
    }
}

/// A count of ours as a JSON number: an integer as an integer.
fn number(value: f64) -> Number {
    // 2^53: every integer up to it is exact in an f64.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if value.fract() == 0.0 && value.abs() < EXACT {
        return Number::from(value as i64); // integral and below 2^53: exact
    }
    Number::from_f64(value).unwrap_or_else(|| Number::from(0))
}

/// Tells the client of one piece of a call's progress. A source's own report is passed on as it
/// said it (progress, total, message) while its progress grows; anything else (a code-mode
/// run's tool calls) counts one more than the last value sent.
pub(crate) async fn notify(
    context: &RequestContext<RoleServer>,
    token: &ProgressToken,
    told: &mut ProgressSent,
    event: &Progress,
) {
    let grows = |progress: &Number| {
        let progress = progress.as_f64().unwrap_or(f64::NAN);
        told.last.is_none_or(|last| progress > last)
    };
    let (value, total, message) = match event {
        Progress::Reported {
            progress,
            total,
            message,
            ..
        } if grows(progress) => (progress.clone(), total.clone(), message.clone()),
        Progress::Reported {
            progress,
            total,
            message,
            ..
        } => (
            told.next(),
            None,
            Some(message.clone().unwrap_or_else(|| match total {
                Some(total) => format!("{progress} of {total}"),
                None => format!("{progress}"),
            })),
        ),
        Progress::CallStarted { called, .. } => {
            (told.next(), None, Some(format!("calls {called}")))
        }
        Progress::CallEnded {
            called, failure, ..
        } => (
            told.next(),
            None,
            Some(match failure {
                None => format!("{called} answered"),
                Some(code) => format!("{called} failed ({code})"),
            }),
        ),
        _ => (told.next(), None, None),
    };
    told.last = value.as_f64().or(told.last);
    let sent = if routed_by_type(context) {
        let mut note = ProgressNotificationParam::new(token.clone(), value.as_f64().unwrap_or(0.0));
        note.total = total.as_ref().and_then(Number::as_f64);
        note.message.clone_from(&message);
        if let Some(kept) = AsWritten::of(context) {
            kept.progress(written(token, value, total, message));
        }
        context.peer.notify_progress(note).await
    } else {
        let params = written(token, value, total, message);
        let note = CustomNotification::new("notifications/progress", Some(Value::Object(params)));
        context
            .peer
            .send_notification(ServerNotification::CustomNotification(note))
            .await
    };
    if let Err(error) = sent {
        tracing::debug!(%error, "the client could not be told of progress");
    }
}

/// Whether the call is of a session over HTTP, whose progress rmcp routes to the call's stream
/// by the notification's type.
fn routed_by_type(context: &RequestContext<RoleServer>) -> bool {
    let stateless = context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    !stateless && context.extensions.get::<Parts>().is_some()
}

/// The params of `notifications/progress` with the numbers as they are.
fn written(
    token: &ProgressToken,
    progress: Number,
    total: Option<Number>,
    message: Option<String>,
) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert(
        "progressToken".to_owned(),
        serde_json::to_value(token).unwrap_or(Value::Null),
    );
    params.insert("progress".to_owned(), Value::Number(progress));
    if let Some(total) = total {
        params.insert("total".to_owned(), Value::Number(total));
    }
    if let Some(message) = message {
        params.insert("message".to_owned(), Value::String(message));
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_longer_than_256_bytes_of_json_is_too_long() {
        use rmcp::model::NumberOrString;
        let string = |text: String| ProgressToken(NumberOrString::String(text.into()));
        assert!(!too_long(&ProgressToken(NumberOrString::Number(i64::MIN))));
        assert!(!too_long(&string("p".repeat(MAX_TOKEN_BYTES - 2))));
        assert!(too_long(&string("p".repeat(MAX_TOKEN_BYTES - 1))));
        assert!(too_long(&string("p".repeat(1 << 20))));
        // Counted as JSON: escapes count.
        assert!(too_long(&string("\n".repeat(200))));
        assert!(too_long(&string("\u{1}".repeat(50))));
    }

    #[test]
    fn our_counts_are_integers_and_a_fraction_stays_one() {
        assert_eq!(number(1.0).to_string(), "1");
        assert_eq!(number(2.5).to_string(), "2.5");
        assert_eq!(number(1e300).to_string(), "1e+300");
    }
}
