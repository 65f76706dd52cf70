//! [`EventDeliveries`]: the webhook subscriptions the gateway's own clients hold
//! (`events/subscribe`, SEP-3415's webhook delivery, which is all ChatGPT and the AI SDK take):
//! each of the gateway's event types, however the gateway receives it, delivered by POSTing each
//! event, signed as Standard Webhooks sign, to the callback the client gave.
//!
//! A subscription is its person's, by `(person, url, name, arguments)`; its id is derived from
//! them, so the same request again refreshes it (the new secret replaces the old, the lifetime
//! starts again) and another person can neither refresh nor end it. Only a person who
//! authenticated may subscribe (the extension's rule). Before the first delivery to a callback
//! the gateway asks it to echo a challenge (remembered per person and URL for a day).
//!
//! A callback is `https`, at most 2,048 bytes, without credentials, and resolves to public
//! addresses only (checked at each delivery, the connection made to the address checked, no
//! redirect followed): a subscriber cannot make the gateway post into its own network. The hosts
//! of `serve.event_callback_hosts` are exempt (an internal receiver). Each event is tried three
//! times (ten seconds each); `410` ends the subscription, `413` drops the event. A person holds
//! at most [`MAX_PER_PERSON`], the gateway [`MAX_ALL`]; each is one of the person's event
//! streams too (`resources/events.rs`, bounded per person).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::Digest as _;
use tokio_util::sync::CancellationToken;
use toolkit_core::JsonObject;
use toolkit_serve::{EventFeed, Refusal};

use crate::event_errors::{
    CALLBACK_ENDPOINT_ERROR, FORBIDDEN, NOT_FOUND, RESOURCE_EXHAUSTED, refused,
};
use crate::standard_webhooks::signature;

/// The most webhook subscriptions one person holds.
pub const MAX_PER_PERSON: usize = 32;

/// The most webhook subscriptions the gateway holds in all.
pub const MAX_ALL: usize = 1024;

/// The lifetime granted when the client asks none (or asks for no end: nothing here outlives a
/// restart, so every grant ends).
const DEFAULT_TTL: Duration = Duration::from_secs(3600);

/// The longest lifetime granted.
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);

/// The shortest lifetime granted (a shorter ask is raised to it).
const MIN_TTL: Duration = Duration::from_secs(60);

/// How long a callback's answered challenge is remembered, per person and URL.
const VERIFIED_FOR: Duration = Duration::from_secs(24 * 3600);

/// The most verification challenges sent to one host a minute.
const VERIFICATIONS_PER_MINUTE: std::num::NonZeroU32 = std::num::NonZeroU32::MIN.saturating_add(9);

/// The most callbacks remembered as verified (the oldest forgotten past it).
const MAX_VERIFIED: usize = 4 * MAX_ALL;

/// How long one POST may take (and, apart, the resolution of its host).
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// The waits before an event's second and third tries.
const RETRIES: [Duration; 2] = [Duration::from_secs(2), Duration::from_secs(10)];

/// How long a subscription waits for its stream's first word (its cursor).
const OPEN_WAIT: Duration = Duration::from_secs(10);

/// The longest callback URL taken.
const MAX_URL: usize = 2048;

/// Every webhook subscription of the gateway's clients, by id.
pub(crate) struct EventDeliveries {
    /// Whether the gateway takes subscriptions (it serves HTTP, so its clients are remote).
    serving: bool,
    /// How callbacks are posted to.
    callbacks: Arc<Callbacks>,
    held: Arc<Mutex<HashMap<String, Arc<Delivered>>>>,
    verified: Mutex<HashMap<(String, String), Instant>>,
    /// The verifications each callback host is sent, at most [`VERIFICATIONS_PER_MINUTE`]: no
    /// one makes the gateway knock at a host's door in a loop.
    knocks: governor::DefaultKeyedRateLimiter<String>,
}

impl std::fmt::Debug for EventDeliveries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventDeliveries")
            .field("serving", &self.serving)
            .field("trusted", &self.callbacks.trusted)
            .finish_non_exhaustive()
    }
}

/// One client's webhook subscription.
struct Delivered {
    id: String,
    person: String,
    url: url::Url,
    /// The signing key, replaced at each refresh.
    key: Mutex<Vec<u8>>,
    /// When it ends unless refreshed.
    until: Mutex<Instant>,
    /// The cursor of the last event or gap its callback took: what a refresh answers, for the
    /// client to resume from.
    cursor: Mutex<Option<String>>,
    ended: CancellationToken,
}

impl Delivered {
    /// Refreshed with the signing key `key` for `ttl` from now: the cursor to answer (that of
    /// the last event or gap its callback took).
    fn refresh(&self, key: &[u8], ttl: Duration) -> Option<String> {
        *self.key.lock().unwrap_or_else(PoisonError::into_inner) = key.to_vec();
        *self.until.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now() + ttl;
        self.cursor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A subscription's request, read.
struct Asked {
    name: String,
    arguments: JsonObject,
    url: url::Url,
    key: Vec<u8>,
    cursor: Option<String>,
    ttl: Duration,
}

impl EventDeliveries {
    /// The subscriptions of a gateway serving HTTP (`serving`), delivering over plain `http` or
    /// to private addresses only to the hosts `trusted`.
    pub(crate) fn new(serving: bool, trusted: &[String]) -> Self {
        Self {
            serving,
            callbacks: Arc::new(Callbacks {
                trusted: trusted
                    .iter()
                    .map(|host| host.to_ascii_lowercase())
                    .collect(),
                timeout: POST_TIMEOUT,
                retries: RETRIES,
            }),
            held: Arc::default(),
            verified: Mutex::default(),
            knocks: governor::RateLimiter::keyed(governor::Quota::per_minute(
                VERIFICATIONS_PER_MINUTE,
            )),
        }
    }

    /// Whether its clients may subscribe by webhook.
    pub(crate) fn serves(&self) -> bool {
        self.serving
    }

    /// `events/subscribe` of `person` (`None`: not authenticated) with `params`, the events
    /// read from the stream `open` opens for `{name, arguments, cursor}`: made, or refreshed.
    pub(crate) async fn subscribe<F>(
        &self,
        params: &JsonObject,
        person: Option<&str>,
        open: impl FnOnce(JsonObject) -> F,
    ) -> Result<JsonObject, Refusal>
    where
        F: Future<Output = Result<EventFeed, Refusal>>,
    {
        if !self.serving {
            return Err(Refusal::Unsupported(
                "events/subscribe is served over HTTP only".into(),
            ));
        }
        let Some(person) = person else {
            return Err(unauthenticated());
        };
        let asked = self.read(params)?;
        let id = subscription_id(person, &asked.url, &asked.name, &asked.arguments);
        if let Some(held) = self.held_as(&id) {
            let cursor = held.refresh(&asked.key, asked.ttl);
            return Ok(granted(&id, asked.ttl, cursor, false));
        }
        room(
            &self.held.lock().unwrap_or_else(PoisonError::into_inner),
            person,
        )?;
        self.verify(person, &id, &asked).await?;
        let mut stream = JsonObject::new();
        stream.insert("name".into(), json!(asked.name));
        stream.insert("arguments".into(), Value::Object(asked.arguments.clone()));
        stream.insert("cursor".into(), json!(asked.cursor));
        if let Some(max_age) = params.get("maxAgeMs") {
            stream.insert("maxAgeMs".into(), max_age.clone());
        }
        let mut feed = open(stream).await?;
        // The stream's first word says where it starts.
        let (cursor, truncated) = match tokio::time::timeout(OPEN_WAIT, feed.recv()).await {
            Ok(Some((method, params))) if method == "notifications/events/active" => (
                params
                    .get("cursor")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                params
                    .get("truncated")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            ),
            _ => {
                return Err(Refusal::Failed(
                    "The event type's stream did not open in time.".into(),
                ));
            }
        };
        let delivered = Arc::new(Delivered {
            id: id.clone(),
            person: person.to_owned(),
            url: asked.url,
            key: Mutex::new(asked.key),
            until: Mutex::new(Instant::now() + asked.ttl),
            cursor: Mutex::new(cursor.clone()),
            ended: CancellationToken::new(),
        });
        {
            // Another request may have made it, or taken the last room, while this one was
            // verified and opened: then this one's stream is let go.
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(made) = held.get(&id).filter(|made| !made.ended.is_cancelled()) {
                let key = delivered
                    .key
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                made.refresh(&key, asked.ttl);
                return Ok(granted(&id, asked.ttl, cursor, truncated));
            }
            room(&held, person)?;
            held.insert(id.clone(), Arc::clone(&delivered));
        }
        tokio::spawn(deliver(
            delivered,
            feed,
            Arc::clone(&self.held),
            Arc::clone(&self.callbacks),
        ));
        Ok(granted(&id, asked.ttl, cursor, truncated))
    }

    /// `events/unsubscribe` of `person` with `params`: their subscription ended.
    pub(crate) fn unsubscribe(
        &self,
        params: &JsonObject,
        person: Option<&str>,
    ) -> Result<JsonObject, Refusal> {
        let Some(person) = person else {
            return Err(unauthenticated());
        };
        let name = text(params, "name")?;
        let arguments = arguments(params)?;
        let url = params
            .get("delivery")
            .and_then(|delivery| delivery.get("url"))
            .and_then(Value::as_str)
            .and_then(|url| url::Url::parse(url).ok())
            .ok_or_else(|| Refusal::InvalidParams("`delivery.url` must be a URL.".into()))?;
        let id = subscription_id(person, &url, &name, &arguments);
        let ended = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        match ended {
            Some(ended) => {
                ended.ended.cancel();
                let mut done = JsonObject::new();
                done.insert("resultType".into(), json!("complete"));
                Ok(done)
            }
            None => Err(refused(
                NOT_FOUND,
                "No such webhook subscription.",
                Some(json!({ "kind": "subscription" })),
            )),
        }
    }

    /// The subscription of id `id`, while it lives.
    fn held_as(&self, id: &str) -> Option<Arc<Delivered>> {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(id)
            .filter(|held| !held.ended.is_cancelled())
            .cloned()
    }

    /// The params of an `events/subscribe`, checked.
    fn read(&self, params: &JsonObject) -> Result<Asked, Refusal> {
        let name = text(params, "name")?;
        let arguments = arguments(params)?;
        let delivery = params.get("delivery").and_then(Value::as_object);
        let field = |key: &str| delivery.and_then(|delivery| delivery.get(key));
        if field("mode").and_then(Value::as_str) != Some("webhook") {
            return Err(Refusal::InvalidParams(
                "`delivery.mode` must be \"webhook\".".into(),
            ));
        }
        let url = field("url")
            .and_then(Value::as_str)
            .ok_or_else(|| Refusal::InvalidParams("`delivery.url` must be a URL.".into()))?;
        let url = self.callback(url)?;
        let key = field("secret")
            .and_then(Value::as_str)
            .and_then(|secret| secret.strip_prefix("whsec_"))
            .and_then(|encoded| {
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .ok()
            })
            .filter(|key| (24..=64).contains(&key.len()))
            .ok_or_else(|| {
                Refusal::InvalidParams(
                    "`delivery.secret` must be `whsec_` and the base64 of 24 to 64 bytes.".into(),
                )
            })?;
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor.clone()),
            Some(_) => {
                return Err(Refusal::InvalidParams(
                    "`cursor` must be a string or null.".into(),
                ));
            }
        };
        // The client suggests, the gateway grants: a lifetime too short, or no number, is raised
        // to the least (the extension has no refusal for it).
        let ttl = match params.get("ttlMs") {
            None | Some(Value::Null) => DEFAULT_TTL,
            Some(asked) => {
                Duration::from_millis(asked.as_u64().unwrap_or(0)).clamp(MIN_TTL, MAX_TTL)
            }
        };
        Ok(Asked {
            name,
            arguments,
            url,
            key,
            cursor,
            ttl,
        })
    }

    /// `url` as a callback: `https` (or `http` to a trusted host), no credentials, no fragment.
    fn callback(&self, url: &str) -> Result<url::Url, Refusal> {
        let refused = |why: &str| Refusal::InvalidParams(format!("`delivery.url` {why}."));
        if url.len() > MAX_URL {
            return Err(refused(&format!("has more than {MAX_URL} bytes")));
        }
        let url = url::Url::parse(url).map_err(|_| refused("is no URL"))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refused("carries credentials"));
        }
        if url.fragment().is_some() {
            return Err(refused("has a fragment"));
        }
        if url.host_str().is_none() {
            return Err(refused("has no host"));
        }
        match url.scheme() {
            "https" => Ok(url),
            "http" if self.callbacks.trusts(&url) => Ok(url),
            _ => Err(refused(
                "must be https (plain http only to a host of serve.event_callback_hosts)",
            )),
        }
    }

    /// Has the callback of `asked` echo a challenge, unless `person` had it do so lately.
    async fn verify(&self, person: &str, id: &str, asked: &Asked) -> Result<(), Refusal> {
        let remembered = (person.to_owned(), asked.url.to_string());
        let fresh = self
            .verified
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&remembered)
            .is_some_and(|at| at.elapsed() < VERIFIED_FOR);
        if fresh {
            return Ok(());
        }
        let host = asked
            .url
            .host_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if self.knocks.len() > MAX_VERIFIED {
            self.knocks.retain_recent();
        }
        if self.knocks.check_key(&host).is_err() {
            return Err(refused(
                RESOURCE_EXHAUSTED,
                format!(
                    "At most {VERIFICATIONS_PER_MINUTE} callbacks of one host are verified a \
                     minute; try again later."
                ),
                Some(json!({ "limit": "verifications", "max": VERIFICATIONS_PER_MINUTE.get() })),
            ));
        }
        let challenge = toolkit_core::random::hex_128()
            .ok_or_else(|| Refusal::Failed("The system gave no randomness.".into()))?;
        let message = format!("msg_verification_{}", &challenge[..16]);
        let body = json!({ "type": "verification", "challenge": challenge }).to_string();
        let failed = |reason: &str| {
            refused(
                CALLBACK_ENDPOINT_ERROR,
                "The callback did not answer the verification challenge.",
                Some(json!({ "reason": reason })),
            )
        };
        let (status, answer) = self
            .callbacks
            .post(&asked.url, &asked.key, (&message, id), &body)
            .await
            .map_err(failed)?;
        let echoed = serde_json::from_slice::<Value>(&answer)
            .ok()
            .and_then(|answer| {
                answer
                    .get("challenge")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        let matches = echoed.is_some_and(|echoed| {
            aws_lc_rs::constant_time::verify_slices_are_equal(
                echoed.as_bytes(),
                challenge.as_bytes(),
            )
            .is_ok()
        });
        if !(200..300).contains(&status) || !matches {
            return Err(failed("challenge_failed"));
        }
        let mut verified = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        verified.retain(|_, at| at.elapsed() < VERIFIED_FOR);
        if verified.len() >= MAX_VERIFIED
            && let Some(oldest) = verified
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(callback, _)| callback.clone())
        {
            verified.remove(&oldest);
        }
        verified.insert(remembered, Instant::now());
        Ok(())
    }

    /// How many subscriptions it holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Refuses when `person` holds [`MAX_PER_PERSON`] in `held`, or the gateway [`MAX_ALL`].
fn room(held: &HashMap<String, Arc<Delivered>>, person: &str) -> Result<(), Refusal> {
    let theirs = held.values().filter(|held| held.person == person).count();
    if theirs >= MAX_PER_PERSON || held.len() >= MAX_ALL {
        return Err(refused(
            RESOURCE_EXHAUSTED,
            format!(
                "At most {MAX_PER_PERSON} webhook subscriptions are held per person \
                 ({MAX_ALL} in all)."
            ),
            Some(json!({ "limit": "subscriptions", "max": MAX_PER_PERSON })),
        ));
    }
    Ok(())
}

/// Delivers `feed`'s events to `delivered`'s callback until it is ended, unsubscribed or
/// outlives its grant (then it is forgotten).
async fn deliver(
    delivered: Arc<Delivered>,
    mut feed: EventFeed,
    held: Arc<Mutex<HashMap<String, Arc<Delivered>>>>,
    callbacks: Arc<Callbacks>,
) {
    loop {
        let until = *delivered
            .until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let next = tokio::select! {
            () = delivered.ended.cancelled() => break,
            () = tokio::time::sleep_until(until.into()) => {
                // A refresh may have moved the end meanwhile.
                if *delivered.until.lock().unwrap_or_else(PoisonError::into_inner) <= Instant::now() {
                    tracing::info!(subscription = %delivered.id, "a webhook subscription ran out, not refreshed");
                    break;
                }
                continue;
            }
            next = feed.recv() => next,
        };
        let Some((method, params)) = next else {
            // The stream ended without a word (its source gone): the callback is told.
            let body = json!({ "type": "terminated", "error": { "code": -32603,
                "message": "The event stream ended at its source." } });
            callbacks
                .send(&delivered, &control("terminated"), &body.to_string())
                .await;
            break;
        };
        let cursor = params
            .get("cursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (message, body, ends) = match method.as_str() {
            "notifications/events/event" => {
                let Some(id) = params.get("eventId").and_then(Value::as_str) else {
                    continue;
                };
                (
                    id.to_owned(),
                    Value::Object(params.clone()).to_string(),
                    false,
                )
            }
            // A gap has a cursor to resume from, or is not told.
            "notifications/events/active"
                if params.get("truncated").and_then(Value::as_bool) == Some(true)
                    && cursor.is_some() =>
            {
                let body = json!({ "type": "gap", "cursor": cursor });
                (control("gap"), body.to_string(), false)
            }
            "notifications/events/terminated" => {
                let body = json!({ "type": "terminated", "error": params.get("error") });
                (control("terminated"), body.to_string(), true)
            }
            _ => continue,
        };
        if !callbacks.send(&delivered, &message, &body).await || ends {
            break;
        }
        if cursor.is_some() {
            *delivered
                .cursor
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = cursor;
        }
    }
    delivered.ended.cancel();
    held.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|_, kept| !Arc::ptr_eq(kept, &delivered));
}

/// How callbacks are posted to: the hosts trusted with plain `http` and private addresses, how
/// long a POST may take, and the waits before an event's second and third tries.
struct Callbacks {
    /// `serve.event_callback_hosts`, lowercased.
    trusted: Vec<String>,
    timeout: Duration,
    retries: [Duration; 2],
}

impl Callbacks {
    /// Whether `url`'s host (or `host:port`) is one of the trusted ones.
    fn trusts(&self, url: &url::Url) -> bool {
        let Some(host) = url.host_str().map(str::to_ascii_lowercase) else {
            return false;
        };
        let with_port = url
            .port_or_known_default()
            .map(|port| format!("{host}:{port}"));
        self.trusted
            .iter()
            .any(|allowed| *allowed == host || Some(allowed) == with_port.as_ref())
    }

    /// Delivers one message (tried three times): `false` when the callback said the subscription is
    /// gone (410).
    async fn send(&self, delivered: &Delivered, message: &str, body: &str) -> bool {
        for attempt in 0..=self.retries.len() {
            let key = delivered
                .key
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let sent = self
                .post(&delivered.url, &key, (message, &delivered.id), body)
                .await;
            match sent {
                Ok((status, _)) if (200..300).contains(&status) => return true,
                Ok((410, _)) => {
                    tracing::info!(subscription = %delivered.id, "the callback said 410: the subscription ended");
                    return false;
                }
                Ok((413, _)) => {
                    tracing::warn!(subscription = %delivered.id, "the callback took no event this large: dropped");
                    return true;
                }
                Ok((status, _)) => {
                    tracing::info!(subscription = %delivered.id, status, attempt, "a delivery refused");
                }
                Err(reason) => {
                    tracing::info!(subscription = %delivered.id, reason, attempt, "a delivery failed");
                }
            }
            let Some(wait) = self.retries.get(attempt) else {
                break;
            };
            tokio::select! {
                () = delivered.ended.cancelled() => return false,
                () = tokio::time::sleep(*wait) => {}
            }
        }
        tracing::warn!(subscription = %delivered.id, "an event not delivered after three tries: dropped");
        true
    }

    /// POSTs `body` to `url`, signed under `key` as `message` of the subscription `id`: the answer's
    /// status and its first 64 KiB, or the extension's word for why it failed. The host is resolved
    /// here and the connection made to an address checked ([`public`]) unless the host is trusted;
    /// no redirect is followed.
    async fn post(
        &self,
        url: &url::Url,
        key: &[u8],
        (message, id): (&str, &str),
        body: &str,
    ) -> Result<(u16, Vec<u8>), &'static str> {
        let host = url.host_str().ok_or("connection_refused")?;
        let port = url.port_or_known_default().ok_or("connection_refused")?;
        let lookup = tokio::net::lookup_host((host.trim_matches(['[', ']']), port));
        let addresses: Vec<SocketAddr> = tokio::time::timeout(self.timeout, lookup)
            .await
            .map_err(|_| "timeout")?
            .map_err(|_| "connection_refused")?
            .collect();
        let open = self.trusts(url);
        let address = addresses
            .into_iter()
            .find(|address| open || public(address.ip()))
            .ok_or("connection_refused")?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.timeout)
            .no_proxy()
            .resolve(host, address)
            .build()
            .map_err(|_| "connection_refused")?;
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |now| now.as_secs())
            .to_string();
        let signed = signature(key, message, &timestamp, body.as_bytes());
        let answer = client
            .post(url.clone())
            .header("content-type", "application/json")
            .header("webhook-id", message)
            .header("webhook-timestamp", &timestamp)
            .header("webhook-signature", signed)
            .header("x-mcp-subscription-id", id)
            .body(body.to_owned())
            .send()
            .await
            .map_err(|error| {
                if error.is_timeout() {
                    "timeout"
                } else {
                    "connection_refused"
                }
            })?;
        let status = answer.status().as_u16();
        let mut read = Vec::new();
        let mut answer = answer;
        while let Ok(Some(chunk)) = answer.chunk().await {
            read.extend_from_slice(&chunk);
            if read.len() > 64 * 1024 {
                break;
            }
        }
        Ok((status, read))
    }
}

/// Whether `ip` is a public address: none of loopback, private, link-local, shared, unique-local,
/// documentation, benchmarking, reserved, multicast, broadcast or unspecified. Written here since
/// the standard library's `is_global` is not stable.
fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => {
            let [a, b, c, _] = ip.octets();
            !(ip.is_private()
                || ip.is_loopback()
                || ip.is_link_local()
                || ip.is_broadcast()
                || ip.is_documentation()
                || ip.is_unspecified()
                || ip.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(ip) => {
            if let Some(v4) = ip.to_ipv4_mapped() {
                return public(IpAddr::V4(v4));
            }
            let [first, second, ..] = ip.segments();
            // Forms that carry another address (NAT64, 6to4, Teredo, IPv4-compatible) are refused
            // whole: the address they lead to is not the one checked.
            !(ip.is_loopback()
                || ip.is_unspecified()
                || ip.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
                || (first == 0x2001 && second == 0x0db8)
                || (first == 0x2001 && second == 0)
                || first == 0x2002
                || (first == 0x0064 && second == 0xff9b)
                || (first == 0x0100 && ip.segments()[1..4] == [0, 0, 0])
                || ip.segments()[..6] == [0; 6])
        }
    }
}

/// The id of `person`'s subscription at `url` to `name` with `arguments`.
fn subscription_id(person: &str, url: &url::Url, name: &str, arguments: &JsonObject) -> String {
    let key = json!([
        person,
        url.as_str(),
        name,
        crate::event_webhooks::canonical(&Value::Object(arguments.clone()))
    ]);
    let digest = sha2::Sha256::digest(key.to_string().as_bytes());
    let hex: String = digest
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sub_{hex}")
}

/// The result of a subscription granted for `ttl`: the time to refresh by is a tenth of it
/// before it ends, so that a refresh a little late, or a clock a little off, does not lose it.
fn granted(id: &str, ttl: Duration, cursor: Option<String>, truncated: bool) -> JsonObject {
    let until = time::OffsetDateTime::now_utc() + ttl.mul_f32(0.9);
    let until = until
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let mut result = JsonObject::new();
    result.insert("resultType".into(), json!("complete"));
    result.insert("id".into(), json!(id));
    result.insert("refreshBefore".into(), json!(until));
    result.insert("cursor".into(), json!(cursor));
    result.insert("truncated".into(), json!(truncated));
    result
}

/// The refusal of a subscription asked by no one who authenticated (the extension's rule).
fn unauthenticated() -> Refusal {
    refused(
        FORBIDDEN,
        "Webhook delivery is for a person who authenticated.",
        None,
    )
}

/// A control message's `webhook-id`: `msg_KIND_` and a random part.
fn control(kind: &str) -> String {
    let random = toolkit_core::random::hex_128().unwrap_or_default();
    format!("msg_{kind}_{}", &random[..random.len().min(16)])
}

fn text(params: &JsonObject, key: &str) -> Result<String, Refusal> {
    params
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Refusal::InvalidParams(format!("`{key}` must be a string.")))
}

fn arguments(params: &JsonObject) -> Result<JsonObject, Refusal> {
    match params.get("arguments") {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::Object(arguments)) => Ok(arguments.clone()),
        Some(_) => Err(Refusal::InvalidParams(
            "`arguments` must be an object.".into(),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_posted_to() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "192.0.0.8",
            "198.18.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:5",
            "64:ff9b:1::1",
            "2002:a00:5::1",
            "2001:0:1::1",
            "::10.0.0.5",
            "fec0::1",
            "100::1",
            "ff02::1",
        ] {
            assert!(!public(private.parse().unwrap()), "{private}");
        }
        for open in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(public(open.parse().unwrap()), "{open}");
        }
    }

    fn params(url: &str, secret: &str) -> JsonObject {
        json!({ "name": "tickets__ticket.updated", "arguments": { "queue": "a" },
                "delivery": { "mode": "webhook", "url": url, "secret": secret } })
        .as_object()
        .cloned()
        .unwrap()
    }

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    #[test]
    fn a_callback_is_https_without_credentials_unless_its_host_is_trusted() {
        let deliveries = EventDeliveries::new(true, &["hooks.internal:8080".to_owned()]);
        let refused = |url: &str, secret: &str| match deliveries.read(&params(url, secret)) {
            Err(Refusal::InvalidParams(words)) => words,
            other => panic!("{url}: {:?}", other.map(|asked| asked.url)),
        };
        assert!(refused("http://example.com/hook", SECRET).contains("must be https"));
        assert!(refused("https://u:p@example.com/hook", SECRET).contains("credentials"));
        assert!(refused("https://example.com/hook#x", SECRET).contains("fragment"));
        assert!(
            refused(&format!("https://example.com/{}", "a".repeat(2048)), SECRET).contains("2048")
        );
        assert!(refused("https://example.com/hook", "whsec_c2hvcnQ=").contains("24 to 64 bytes"));
        assert!(refused("https://example.com/hook", "plain").contains("whsec_"));
        assert!(
            deliveries
                .read(&params("https://example.com/hook", SECRET))
                .is_ok()
        );
        assert!(
            deliveries
                .read(&params("http://hooks.internal:8080/hook", SECRET))
                .is_ok()
        );
        assert!(
            deliveries
                .read(&params("http://hooks.internal:9090/hook", SECRET))
                .is_err()
        );
    }

    #[test]
    fn one_persons_subscription_is_not_anothers() {
        let url = url::Url::parse("https://example.com/hook").unwrap();
        let arguments = json!({ "b": 1, "a": 2 }).as_object().cloned().unwrap();
        let reordered = json!({ "a": 2, "b": 1 }).as_object().cloned().unwrap();
        let alice = subscription_id("token:alice", &url, "t", &arguments);
        assert_eq!(alice, subscription_id("token:alice", &url, "t", &reordered));
        assert_ne!(alice, subscription_id("token:bob", &url, "t", &arguments));
        assert!(alice.starts_with("sub_") && alice.len() == 36, "{alice}");
    }

    /// No one unauthenticated subscribes; bob cannot end alice's subscription (it is no
    /// subscription of his); a callback at a private address is never posted to, however
    /// ready it is to answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_one_unauthenticated_subscribes_and_no_one_ends_anothers() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let url = receiver_answering(200, Arc::clone(&heard)).await;
        let trusting = EventDeliveries::new(true, &["127.0.0.1".to_owned()]);
        let open = Mutex::new(Vec::new());
        let refused = trusting
            .subscribe(&params(&url, SECRET), None, |_| async {
                Err(Refusal::Failed("not opened".into()))
            })
            .await;
        assert!(
            matches!(
                refused,
                Err(Refusal::Coded {
                    code: FORBIDDEN,
                    ..
                })
            ),
            "{refused:?}"
        );
        subscribe(
            &trusting,
            "token:alice",
            (&url, json!({ "queue": "a" })),
            &open,
        )
        .await
        .unwrap();
        let bobs = trusting.unsubscribe(&params(&url, SECRET), Some("token:bob"));
        assert!(
            matches!(
                bobs,
                Err(Refusal::Coded {
                    code: NOT_FOUND,
                    ..
                })
            ),
            "{bobs:?}"
        );
        assert_eq!(trusting.len(), 1, "alice's is still held");
        assert!(
            trusting
                .unsubscribe(&params(&url, SECRET), Some("token:alice"))
                .is_ok()
        );
        assert_eq!(trusting.len(), 0);

        // The same receiver, not trusted: its address is private, so nothing reaches it.
        heard.lock().unwrap().clear();
        let careful = EventDeliveries::new(true, &[]);
        let private = url.replace("http://", "https://");
        let refused = careful
            .subscribe(&params(&private, SECRET), Some("token:alice"), |_| async {
                Err(Refusal::Failed("not opened".into()))
            })
            .await;
        match refused {
            Err(Refusal::Coded { code, data, .. }) => {
                assert_eq!(code, CALLBACK_ENDPOINT_ERROR);
                assert_eq!(data.unwrap()["reason"], "connection_refused");
            }
            other => panic!("{other:?}"),
        }
        assert!(heard.lock().unwrap().is_empty(), "nothing posted to it");
        assert_eq!(careful.len(), 0);
    }

    /// A receiver on 127.0.0.1 that echoes every challenge and takes every event: its URL.
    async fn receiver() -> String {
        receiver_answering(200, Arc::default()).await
    }

    /// A receiver on 127.0.0.1 that echoes every challenge and answers each event `status`,
    /// keeping each event's headers and body in `heard`: its URL.
    async fn receiver_answering(
        status: u16,
        heard: Arc<Mutex<Vec<(axum::http::HeaderMap, Value)>>>,
    ) -> String {
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let heard = Arc::clone(&heard);
                    async move {
                        let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                        if body["type"] == "verification" {
                            return (
                                axum::http::StatusCode::OK,
                                axum::Json(json!({ "challenge": body["challenge"] })),
                            );
                        }
                        heard.lock().unwrap().push((headers, body));
                        (
                            axum::http::StatusCode::from_u16(status).unwrap(),
                            axum::Json(json!({})),
                        )
                    }
                },
            ),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://127.0.0.1:{port}/hook")
    }

    /// Subscribes `person` with `arguments` at `url`, its stream one that stays open (its
    /// sender kept in `open`).
    async fn subscribe(
        deliveries: &EventDeliveries,
        person: &str,
        (url, arguments): (&str, Value),
        open: &Mutex<Vec<tokio::sync::mpsc::Sender<(String, JsonObject)>>>,
    ) -> Result<JsonObject, Refusal> {
        let mut asked = params(url, SECRET);
        asked.insert("arguments".into(), arguments);
        deliveries
            .subscribe(&asked, Some(person), |_| async {
                let (sender, feed) = tokio::sync::mpsc::channel(4);
                let active = json!({ "cursor": "c/0", "truncated": false });
                sender
                    .send((
                        "notifications/events/active".into(),
                        active.as_object().cloned().unwrap(),
                    ))
                    .await
                    .unwrap();
                open.lock().unwrap().push(sender);
                Ok(feed)
            })
            .await
    }

    /// The same subscription asked for at once from many tasks is made once; many asked at once
    /// by one person stop at their cap, and another person still gets room.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn subscriptions_asked_at_once_are_made_once_and_stop_at_the_cap() {
        let url = receiver().await;
        let deliveries = EventDeliveries::new(true, &["127.0.0.1".to_owned()]);
        let open = Mutex::new(Vec::new());
        let same = futures_util::future::join_all(
            (0..8).map(|_| subscribe(&deliveries, "token:alice", (&url, json!({ "q": 1 })), &open)),
        )
        .await;
        let ids: std::collections::HashSet<String> = same
            .into_iter()
            .map(|made| made.unwrap()["id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(ids.len(), 1);
        assert_eq!(deliveries.len(), 1, "made once");
        let many = futures_util::future::join_all((0..40).map(|n| {
            subscribe(
                &deliveries,
                "token:alice",
                (&url, json!({ "q": n + 100 })),
                &open,
            )
        }))
        .await;
        let made = many.iter().filter(|made| made.is_ok()).count();
        assert_eq!(made, MAX_PER_PERSON - 1, "her room was one already taken");
        assert!(many.iter().all(|made| match made {
            Ok(_) => true,
            Err(Refusal::Coded { code, .. }) => *code == RESOURCE_EXHAUSTED,
            Err(_) => false,
        }));
        assert_eq!(deliveries.len(), MAX_PER_PERSON);
        let bobs = subscribe(&deliveries, "token:bob", (&url, json!({ "q": 1 })), &open).await;
        assert!(bobs.is_ok(), "bob is not starved by alice: {bobs:?}");
        assert_eq!(deliveries.len(), MAX_PER_PERSON + 1);
    }

    /// An event is POSTed signed under the subscription's secret, `webhook-id` its `eventId`;
    /// a callback answering 410 ends the subscription.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_are_posted_signed_and_a_410_ends_the_subscription() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let url = receiver_answering(410, Arc::clone(&heard)).await;
        let deliveries = EventDeliveries::new(true, &["127.0.0.1".to_owned()]);
        let open = Mutex::new(Vec::new());
        let made = subscribe(&deliveries, "token:alice", (&url, json!({})), &open)
            .await
            .unwrap();
        assert_eq!(deliveries.len(), 1);
        let event = json!({ "eventId": "evt_1", "name": "t", "timestamp": "2026-12-07T00:00:00Z",
                            "data": { "n": 1 }, "cursor": "c/1" });
        let sender = open.lock().unwrap()[0].clone();
        sender
            .send((
                "notifications/events/event".into(),
                event.as_object().cloned().unwrap(),
            ))
            .await
            .unwrap();
        for _ in 0..100 {
            if deliveries.len() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(deliveries.len(), 0, "410 ended it");
        let heard = heard.lock().unwrap();
        let events: Vec<_> = heard
            .iter()
            .filter(|(_, body)| body["type"] != "verification")
            .collect();
        assert_eq!(events.len(), 1, "not tried again after 410");
        let (headers, body) = events[0];
        assert_eq!(body, &event);
        assert_eq!(headers["webhook-id"], "evt_1");
        assert_eq!(
            headers["x-mcp-subscription-id"],
            made["id"].as_str().unwrap()
        );
        let signed = signature(
            &crate::standard_webhooks::key_of(SECRET),
            "evt_1",
            headers["webhook-timestamp"].to_str().unwrap(),
            event.to_string().as_bytes(),
        );
        assert_eq!(headers["webhook-signature"], signed.as_str());
    }

    /// A host's callbacks are verified at most ten times a minute, whoever asks (here eleven
    /// people, one subscription each).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hosts_callbacks_are_verified_ten_times_a_minute_at_most() {
        let url = receiver().await;
        let deliveries = EventDeliveries::new(true, &["127.0.0.1".to_owned()]);
        let open = Mutex::new(Vec::new());
        for person in 0..10 {
            let person = format!("token:p{person}");
            subscribe(&deliveries, &person, (&url, json!({})), &open)
                .await
                .unwrap();
        }
        let refused = subscribe(&deliveries, "token:p10", (&url, json!({})), &open).await;
        match refused {
            Err(Refusal::Coded { code, data, .. }) => {
                assert_eq!(code, RESOURCE_EXHAUSTED);
                assert_eq!(data.unwrap()["limit"], "verifications");
            }
            other => panic!("{other:?}"),
        }
        // One verified already is not verified again: its refresh is taken.
        assert!(
            subscribe(&deliveries, "token:p0", (&url, json!({})), &open)
                .await
                .is_ok()
        );
    }

    /// `deliveries` posting with a short timeout and short waits between tries.
    fn hurried(mut deliveries: EventDeliveries) -> EventDeliveries {
        deliveries.callbacks = Arc::new(Callbacks {
            trusted: deliveries.callbacks.trusted.clone(),
            timeout: Duration::from_millis(300),
            retries: [Duration::from_millis(20); 2],
        });
        deliveries
    }

    /// A lifetime asked is granted within 1 minute and 24 hours; none, or one not a number,
    /// is an hour.
    #[test]
    fn the_lifetime_granted_is_clamped() {
        let deliveries = EventDeliveries::new(true, &[]);
        let ttl = |asked: Value| {
            let mut params = params("https://example.com/hook", SECRET);
            params.insert("ttlMs".into(), asked);
            deliveries.read(&params).unwrap().ttl
        };
        assert_eq!(ttl(json!(0)), MIN_TTL);
        assert_eq!(ttl(json!(-5)), MIN_TTL);
        assert_eq!(ttl(json!(1_000)), MIN_TTL);
        assert_eq!(ttl(json!(600_000)), Duration::from_secs(600));
        assert_eq!(ttl(json!(u64::MAX)), MAX_TTL);
        assert_eq!(ttl(Value::Null), DEFAULT_TTL);
        assert_eq!(ttl(json!("soon")), MIN_TTL);
    }

    /// A callback that never answers its challenge is given up after the POST's timeout, and
    /// the subscription refused, saying so.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_callback_that_never_answers_is_given_up_at_the_timeout() {
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "late"
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let deliveries = hurried(EventDeliveries::new(true, &["127.0.0.1".to_owned()]));
        let open = Mutex::new(Vec::new());
        let started = Instant::now();
        match subscribe(&deliveries, "token:alice", (&url, json!({})), &open).await {
            Err(Refusal::Coded { code, data, .. }) => {
                assert_eq!(code, CALLBACK_ENDPOINT_ERROR);
                assert_eq!(data.unwrap()["reason"], "timeout");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(deliveries.len(), 0);
    }

    /// An event its callback refuses twice is tried a third time, and taken then, once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_event_refused_twice_is_tried_a_third_time() {
        let refusals = Arc::new(std::sync::atomic::AtomicUsize::new(2));
        let taken = Arc::new(Mutex::new(Vec::new()));
        let (left, kept) = (Arc::clone(&refusals), Arc::clone(&taken));
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |body: axum::body::Bytes| {
                let (left, kept) = (Arc::clone(&left), Arc::clone(&kept));
                async move {
                    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                    if body["type"] == "verification" {
                        return (
                            axum::http::StatusCode::OK,
                            axum::Json(json!({ "challenge": body["challenge"] })),
                        );
                    }
                    let refuse = left
                        .fetch_update(
                            std::sync::atomic::Ordering::SeqCst,
                            std::sync::atomic::Ordering::SeqCst,
                            |n| n.checked_sub(1),
                        )
                        .is_ok();
                    if refuse {
                        return (
                            axum::http::StatusCode::SERVICE_UNAVAILABLE,
                            axum::Json(json!({})),
                        );
                    }
                    kept.lock().unwrap().push(body);
                    (axum::http::StatusCode::NO_CONTENT, axum::Json(json!({})))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let deliveries = hurried(EventDeliveries::new(true, &["127.0.0.1".to_owned()]));
        let open = Mutex::new(Vec::new());
        subscribe(&deliveries, "token:alice", (&url, json!({})), &open)
            .await
            .unwrap();
        let event = json!({ "eventId": "evt_9", "name": "t", "timestamp": "2026-12-07T00:00:00Z",
                            "data": {}, "cursor": "c/9" });
        let sender = open.lock().unwrap()[0].clone();
        sender
            .send((
                "notifications/events/event".into(),
                event.as_object().cloned().unwrap(),
            ))
            .await
            .unwrap();
        for _ in 0..100 {
            if !taken.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(taken.lock().unwrap().as_slice(), [event]);
        assert_eq!(refusals.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(deliveries.len(), 1, "still subscribed");
    }
}
