//! Webhook delivery of events (`events/subscribe`, `events/unsubscribe`): the server POSTs each
//! event of a subscription, signed as Standard Webhooks sign, to a URL the caller receives at.
//!
//! The caller gives the URL and the signing secret (`whsec_` and base64 of 24 to 64 random
//! bytes: the extension has the client make it); the server answers with the subscription's id
//! (sent back as `X-MCP-Subscription-Id` on each delivery) and the time to refresh it before.
//! A refresh is the same request again. What arrives at the URL is the caller's to verify and
//! read ([`EventCheck`](super::EventCheck)); the gateway does so in its `event_webhooks.rs`.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{DeliveryMode, EventType};
use crate::source::Mcp;
use toolkit_core::{JsonObject, Reason, ToolSourceError};

/// What a server granted an `events/subscribe`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookGrant {
    /// The subscription's id, which each delivery carries as `X-MCP-Subscription-Id`.
    pub id: String,
    /// When to refresh by (RFC 3339), as the server wrote it; `None`: it does not expire.
    pub refresh_before: Option<String>,
    /// A cursor the caller may keep: everything before it was delivered or given up.
    pub cursor: Option<String>,
    /// Whether events were skipped (the cursor given was older than the server keeps).
    pub truncated: bool,
}

impl WebhookGrant {
    /// How long from now until [`refresh_before`](Self::refresh_before), when it is a time this
    /// client reads (zero when it has passed).
    pub fn refresh_in(&self) -> Option<Duration> {
        let at = time::OffsetDateTime::parse(
            self.refresh_before.as_deref()?,
            &time::format_description::well_known::Rfc3339,
        )
        .ok()?;
        let left = at - time::OffsetDateTime::now_utc();
        Some(Duration::try_from(left).unwrap_or(Duration::ZERO))
    }
}

impl Mcp {
    /// Asks `event`'s events with `arguments` delivered to `url`, signed with `secret`
    /// (`events/subscribe`), from `cursor` (`None`: from now), for about `ttl` (the server
    /// decides; `None`: its default). Asked again with the same event, arguments and URL, it
    /// refreshes the subscription.
    ///
    /// # Errors
    ///
    /// [`Unsupported`](Reason::Unsupported) when the server did not declare events or `event`
    /// is not delivered by webhook; [`InvalidInput`](Reason::InvalidInput) for arguments
    /// outside the type's `inputSchema` (nothing sent) or a URL or secret the server refuses;
    /// [`Unavailable`](Reason::Unavailable) when the server could not verify or reach the URL;
    /// else as [`Mcp::poll_events_with`].
    pub async fn subscribe_events(
        &self,
        event: &EventType,
        arguments: JsonObject,
        (url, secret): (&str, &str),
        cursor: Option<&str>,
        ttl: Option<Duration>,
    ) -> Result<WebhookGrant, ToolSourceError> {
        self.events_declared().await?;
        event
            .offering(DeliveryMode::Webhook)
            .map_err(|reason| self.error(reason))?;
        event
            .check_arguments(&arguments)
            .map_err(|problem| self.error(Reason::invalid_input(problem)))?;
        let mut params = Map::new();
        params.insert("name".into(), json!(event.name));
        params.insert("arguments".into(), Value::Object(arguments));
        params.insert(
            "delivery".into(),
            json!({ "mode": "webhook", "url": url, "secret": secret }),
        );
        params.insert("cursor".into(), cursor.map_or(Value::Null, |c| json!(c)));
        if let Some(ttl) = ttl {
            params.insert(
                "ttlMs".into(),
                json!(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
            );
        }
        let result = self.ask_events("events/subscribe", params).await?;
        let Some(Value::String(id)) = result.get("id") else {
            return Err(self.error(Reason::invalid_response(
                "an events/subscribe result without a subscription `id`",
            )));
        };
        let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(WebhookGrant {
            id: toolkit_core::text::cut_utf16(id, 256),
            refresh_before: text("refreshBefore"),
            cursor: text("cursor"),
            truncated: result
                .get("truncated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// Ends the webhook subscription to `event` with `arguments` at `url`
    /// (`events/unsubscribe`); one the server no longer has is ended as well.
    ///
    /// # Errors
    ///
    /// As [`Mcp::subscribe_events`], but for a subscription the server does not know.
    pub async fn unsubscribe_events(
        &self,
        event: &EventType,
        arguments: &JsonObject,
        url: &str,
    ) -> Result<(), ToolSourceError> {
        self.events_declared().await?;
        let mut params = Map::new();
        params.insert("name".into(), json!(event.name));
        params.insert("arguments".into(), Value::Object(arguments.clone()));
        params.insert("delivery".into(), json!({ "mode": "webhook", "url": url }));
        match self.ask_events("events/unsubscribe", params).await {
            Err(error) if matches!(error.reason, Reason::NotFound { .. }) => Ok(()),
            answer => answer.map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_to_refresh_by_is_read_from_rfc_3339() {
        let grant = |at: Option<&str>| WebhookGrant {
            id: "sub_1".into(),
            refresh_before: at.map(str::to_owned),
            cursor: None,
            truncated: false,
        };
        let soon = time::OffsetDateTime::now_utc() + time::Duration::minutes(10);
        let soon = soon
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let left = grant(Some(&soon)).refresh_in().unwrap_or_default();
        assert!(
            left > Duration::from_secs(590) && left <= Duration::from_secs(600),
            "{left:?}"
        );
        assert_eq!(
            grant(Some("2001-01-01T00:00:00Z")).refresh_in(),
            Some(Duration::ZERO)
        );
        assert_eq!(grant(Some("tomorrow")).refresh_in(), None);
        assert_eq!(grant(None).refresh_in(), None);
    }
}
