//! People connecting their own accounts at an upstream MCP server's authorization server, through
//! the gateway: [`Connects`], the pending connections and the two pages a browser visits, and
//! `Connected`, a source's side of it (`oauth = { per_person = true, … }`).
//!
//! A call by a person with no grant kept for the source (under `SOURCE#PRINCIPAL` in the source's
//! token store) does not reach the upstream: the gateway opens a pending connection — an
//! unguessable nonce bound to that person and source, expiring after [`EXPIRES`], at most
//! [`MAX_PENDING`] at once — and asks the calling client by a URL elicitation (MCP 2025-11-25,
//! only a client that declared `elicitation.url`) to open `PUBLIC/connect/NONCE`; any other
//! client's call fails with that link, which the model reads. The page starts the runtime's
//! authorization (code + PKCE, discovery, registration: [`OAuthClient::login`]) and redirects
//! (302) to the authorization server; the person signs in there, and the server sends the browser
//! to `PUBLIC/oauth/callback`, whose `state` must be that of a pending connection's authorization
//! (anything else is refused). The code is exchanged, the grant kept under the person's key,
//! the page says "connected", the waiting call is told (and its client sent
//! `notifications/elicitation/complete`) and goes on. The nonce itself grants nothing: it only
//! starts an authorization at the upstream's server, which the person makes there.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION, REFERRER_POLICY};
use axum::response::{IntoResponse, Response};
use reqwest::Url;
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};
use toolkit_auth::{AuthError, AuthorizationCallback, OAuthClient, TokenStore};
use toolkit_core::context::{ELICITATION_COMPLETE, ELICITATION_CREATE, Principal, Relayed};
use toolkit_core::{BoxFuture, CallContext, Reason, ToolSourceError};

pub use super::grant_store::token_store;
use super::person_secrets::Entry;

/// How long a pending connection waits for its person.
pub const EXPIRES: Duration = Duration::from_secs(600);

/// The most connections pending at once, of everyone.
pub const MAX_PENDING: usize = 1_024;

/// How long the connect page waits for the authorization URL (discovery, registration).
const URL_WAIT: Duration = Duration::from_secs(20);

/// How long the callback page waits for the code's exchange.
const EXCHANGE_WAIT: Duration = Duration::from_secs(30);

/// The path of the connect page, before its nonce.
pub(crate) const CONNECT_PATH: &str = "/connect/";

/// The path of the redirect URI.
pub(crate) const CALLBACK_PATH: &str = "/oauth/callback";

/// The entry's key that names the person's grant in the token store.
pub(crate) const STORE_KEY: &str = "store_key";

/// Makes the client that authorizes one person: the store key, and the callback it sends the
/// person's browser through.
pub(crate) type Login =
    Arc<dyn Fn(&str, ConnectCallback) -> Result<OAuthClient, String> + Send + Sync>;

/// The connections pending, and the gateway's public origin their pages are at.
pub struct Connects {
    public: Url,
    pending: Mutex<HashMap<String, Arc<Pending>>>,
}

impl std::fmt::Debug for Connects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connects")
            .field("public", &self.public.as_str())
            .finish_non_exhaustive()
    }
}

/// One person's connection of one source, pending.
struct Pending {
    principal: String,
    source: String,
    /// The key of the person's grant in the store.
    key: String,
    expires: Instant,
    login: Login,
    /// Whether the authorization was started (by the first visit of the connect page).
    started: AtomicBool,
    /// The authorization URL, once made.
    url: watch::Sender<Option<Url>>,
    /// The `state` of that URL.
    state: Mutex<Option<String>>,
    /// Where the redirect the browser brings back goes (taken once).
    redirect: Mutex<Option<oneshot::Sender<Url>>>,
    /// `Some(true)` once connected, `Some(false)` once failed.
    done: watch::Sender<Option<bool>>,
}

impl Connects {
    /// No connection pending; pages at `public` (an origin).
    pub fn new(public: Url) -> Self {
        Self {
            public,
            pending: Mutex::default(),
        }
    }

    /// The redirect URI registered at authorization servers: `PUBLIC/oauth/callback`.
    pub fn redirect_uri(&self) -> Url {
        let mut url = self.public.clone();
        url.set_path(CALLBACK_PATH);
        url
    }

    fn connect_url(&self, nonce: &str) -> Url {
        let mut url = self.public.clone();
        url.set_path(&format!("{CONNECT_PATH}{nonce}"));
        url
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Pending>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pending connection of `principal` to `source` (the one there is, else a new one):
    /// its link, and what tells when it is done.
    fn open(
        &self,
        principal: &str,
        source: &str,
        key: &str,
        login: &Login,
    ) -> Result<(Url, watch::Receiver<Option<bool>>), String> {
        let mut pending = self.pending();
        let now = Instant::now();
        pending.retain(|_, kept| kept.expires > now && kept.done.borrow().is_none());
        if let Some((nonce, kept)) = pending
            .iter()
            .find(|(_, kept)| kept.principal == principal && kept.source == source)
        {
            return Ok((self.connect_url(nonce), kept.done.subscribe()));
        }
        if pending.len() >= MAX_PENDING {
            return Err(
                "too many people are connecting accounts through the gateway right now; try again in a few minutes"
                    .to_owned(),
            );
        }
        let nonce = toolkit_core::random::hex_128()
            .ok_or_else(|| "the gateway has no randomness to make a link with".to_owned())?;
        let (done, waiting) = watch::channel(None);
        pending.insert(
            nonce.clone(),
            Arc::new(Pending {
                principal: principal.to_owned(),
                source: source.to_owned(),
                key: key.to_owned(),
                expires: now + EXPIRES,
                login: Arc::clone(login),
                started: AtomicBool::new(false),
                url: watch::channel(None).0,
                state: Mutex::new(None),
                redirect: Mutex::new(None),
                done,
            }),
        );
        Ok((self.connect_url(&nonce), waiting))
    }

    /// The pending connection of `nonce`, unexpired.
    fn find(&self, nonce: &str) -> Option<Arc<Pending>> {
        let pending = self.pending();
        pending
            .get(nonce)
            .filter(|kept| kept.expires > Instant::now())
            .cloned()
    }

    /// The connect page of `nonce`: starts its authorization (once) and redirects to the
    /// authorization server.
    pub(crate) async fn connect_page(self: Arc<Self>, nonce: &str) -> Response {
        let Some(pending) = self.find(nonce) else {
            return page(
                StatusCode::NOT_FOUND,
                "This link is not (or no longer) valid. Ask your assistant to call the tool again \
                 for a new one.",
            );
        };
        if !pending.started.swap(true, Ordering::SeqCst) {
            tokio::spawn(Arc::clone(&self).authorize(nonce.to_owned(), Arc::clone(&pending)));
        }
        let mut url = pending.url.subscribe();
        let mut done = pending.done.subscribe();
        let published = tokio::time::timeout(URL_WAIT, async {
            tokio::select! {
                url = url.wait_for(Option::is_some) => url.ok().and_then(|url| url.clone()),
                _ = done.wait_for(Option::is_some) => None,
            }
        })
        .await;
        match published {
            Ok(Some(url)) => (
                StatusCode::FOUND,
                [
                    (LOCATION, url.to_string()),
                    (CACHE_CONTROL, "no-store".to_owned()),
                    (REFERRER_POLICY, "no-referrer".to_owned()),
                ],
            )
                .into_response(),
            _ => page(
                StatusCode::BAD_GATEWAY,
                "The account's authorization server could not be reached. Ask your assistant to \
                 call the tool again for a new link.",
            ),
        }
    }

    /// Runs the authorization of `pending` to its end, keeps its grant, and forgets it.
    async fn authorize(self: Arc<Self>, nonce: String, pending: Arc<Pending>) {
        let callback = ConnectCallback {
            pending: Arc::clone(&pending),
            redirect_uri: self.redirect_uri(),
        };
        let connected = match (pending.login)(&pending.key, callback) {
            Ok(client) => match client.login().await {
                Ok(_) => true,
                Err(error) => {
                    tracing::warn!(
                        source = %pending.source,
                        principal = %pending.principal,
                        "a person's connection failed: {error}"
                    );
                    false
                }
            },
            Err(problem) => {
                tracing::error!(source = %pending.source, "a person's connection cannot start: {problem}");
                false
            }
        };
        if connected {
            tracing::info!(source = %pending.source, principal = %pending.principal, "a person connected their account");
        }
        pending.done.send_replace(Some(connected));
        self.pending().remove(&nonce);
    }

    /// The redirect URI's page: the authorization server's answer `query` handed to the
    /// authorization whose `state` it carries, if one is pending.
    pub(crate) async fn callback_page(&self, query: Option<&str>) -> Response {
        let refused = || {
            page(
                StatusCode::BAD_REQUEST,
                "No connection waits for this answer (it expired, was finished, or was never \
                 asked for). Ask your assistant to call the tool again for a new link.",
            )
        };
        let query = query.unwrap_or_default();
        let Some(state) = url::form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| name == "state")
            .map(|(_, value)| value.into_owned())
        else {
            return refused();
        };
        let found = {
            let pending = self.pending();
            let now = Instant::now();
            pending
                .values()
                .find(|kept| {
                    kept.expires > now
                        && kept
                            .state
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .as_deref()
                            .is_some_and(|kept| same(kept, &state))
                })
                .cloned()
        };
        let Some(pending) = found else {
            return refused();
        };
        let Some(redirect) = pending
            .redirect
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return refused();
        };
        let mut back = self.redirect_uri();
        back.set_query(Some(query));
        let _ = redirect.send(back);
        let mut done = pending.done.subscribe();
        let connected = tokio::time::timeout(EXCHANGE_WAIT, done.wait_for(Option::is_some))
            .await
            .ok()
            .and_then(Result::ok)
            .and_then(|done| *done);
        if connected == Some(true) {
            page(
                StatusCode::OK,
                &format!(
                    "Connected: your account is connected to {}. You can close this page.",
                    pending.source
                ),
            )
        } else {
            page(
                StatusCode::BAD_GATEWAY,
                "The connection did not complete. Ask your assistant to call the tool again for a \
                 new link.",
            )
        }
    }
}

/// Whether `a` and `b` are equal, compared in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |difference, (x, y)| difference | (x ^ y))
            == 0
}

/// A small HTML page saying `text`.
fn page(status: StatusCode, text: &str) -> Response {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Connection</title></head>\
         <body><p>{escaped}</p></body></html>\n"
    );
    (
        status,
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
            (REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
        .into_response()
}

/// The callback of one pending connection's authorization: publishes the authorization URL for
/// the connect page, and waits for the redirect the callback page receives.
pub(crate) struct ConnectCallback {
    pending: Arc<Pending>,
    redirect_uri: Url,
}

impl AuthorizationCallback for ConnectCallback {
    fn redirect_uri(&self) -> Url {
        self.redirect_uri.clone()
    }

    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async move {
            let state = authorization_url
                .query_pairs()
                .find(|(name, _)| name == "state")
                .map(|(_, value)| value.into_owned())
                .ok_or_else(|| AuthError::Refused("the authorization URL has no state".into()))?;
            let (sender, receiver) = oneshot::channel();
            *self
                .pending
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(state);
            *self
                .pending
                .redirect
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(sender);
            self.pending.url.send_replace(Some(authorization_url));
            let wait = self
                .pending
                .expires
                .saturating_duration_since(Instant::now());
            match tokio::time::timeout(wait, receiver).await {
                Ok(Ok(redirect)) => Ok(redirect),
                _ => Err(AuthError::Refused(
                    "the person did not come back from the authorization server".into(),
                )),
            }
        })
    }
}

/// A source's side of people's connections: whether a person has a grant, and connecting one
/// who has none.
pub(crate) struct Connected {
    source: String,
    store: Arc<dyn TokenStore>,
    connects: Arc<Connects>,
    login: Login,
}

impl Connected {
    /// Connections to `source`, whose grants `store` keeps, each authorized by a client `login`
    /// makes.
    pub(crate) fn new(
        source: &str,
        store: Arc<dyn TokenStore>,
        connects: Arc<Connects>,
        login: Login,
    ) -> Self {
        Self {
            source: source.to_owned(),
            store,
            connects,
            login,
        }
    }

    /// The key of `principal`'s grant for `source` in the token store.
    pub fn key(source: &str, principal: &str) -> String {
        format!("{source}#{principal}")
    }

    /// The entry of `principal`'s grant ([`STORE_KEY`]), if one is kept.
    pub(crate) async fn kept(
        &self,
        principal: &Principal,
    ) -> Result<Option<Entry>, ToolSourceError> {
        let key = Self::key(&self.source, principal.id());
        match self.store.load(&key).await {
            Ok(Some(_)) => Ok(Some([(STORE_KEY.to_owned(), key)].into())),
            Ok(None) => Ok(None),
            Err(error) => {
                tracing::error!(source = %self.source, "people's grants cannot be read: {error}");
                Err(ToolSourceError::new(
                    &self.source,
                    Reason::unavailable("people's connections cannot be read"),
                ))
            }
        }
    }

    /// Connects `principal`, who has no grant: asks the calling client to open the link (URL
    /// elicitation) and waits for the connection, else fails with the link.
    pub(crate) async fn connect(
        &self,
        principal: &Principal,
        context: &CallContext,
    ) -> Result<Entry, ToolSourceError> {
        let key = Self::key(&self.source, principal.id());
        let fail = |description: String| {
            ToolSourceError::new(&self.source, Reason::CallFailed { description })
        };
        let (url, mut done) = self
            .connects
            .open(principal.id(), &self.source, &key, &self.login)
            .map_err(fail)?;
        let minutes = EXPIRES.as_secs() / 60;
        let told = format!(
            "This source acts with the account of the person calling it, and {} has not connected \
             theirs yet. The person opens {url} in their browser to connect it (the link is theirs \
             alone and lasts {minutes} minutes), then the tool can be called again.",
            principal.name()
        );
        let Some(relay) = context
            .relay()
            .filter(|relay| relay.takes_url_elicitation())
        else {
            return Err(fail(told));
        };
        let id = toolkit_core::random::hex_128().unwrap_or_else(|| key.clone());
        let asked = relay
            .ask(
                ELICITATION_CREATE,
                Some(json!({
                    "mode": "url",
                    "elicitationId": id,
                    "url": url.as_str(),
                    "message": format!(
                        "Connect your account to {}: the gateway acts with it for your calls only.",
                        self.source
                    ),
                })),
            )
            .await;
        let accepted = matches!(&asked, Relayed::Answer(answer)
            if answer.get("action").and_then(Value::as_str) == Some("accept"));
        if !accepted {
            return Err(fail(format!(
                "The person did not agree to connect their account. {told}"
            )));
        }
        let connected = tokio::time::timeout(EXPIRES, done.wait_for(Option::is_some))
            .await
            .ok()
            .and_then(Result::ok)
            .and_then(|done| *done);
        if connected != Some(true) {
            return Err(fail(
                "The account was not connected. Ask the person to call the tool again for a new \
                 link."
                    .to_owned(),
            ));
        }
        relay
            .notify(ELICITATION_COMPLETE, Some(json!({ "elicitationId": id })))
            .await;
        Ok([(STORE_KEY.to_owned(), key)].into())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn login() -> Login {
        Arc::new(|_: &str, _: ConnectCallback| Err("no client in this test".to_owned()))
    }

    #[test]
    fn one_link_per_person_and_source_and_a_bound() {
        let connects = Connects::new("https://gateway.example".parse().unwrap());
        let (a, _) = connects.open("alice", "s", "s#alice", &login()).unwrap();
        let (again, _) = connects.open("alice", "s", "s#alice", &login()).unwrap();
        let (b, _) = connects.open("bob", "s", "s#bob", &login()).unwrap();
        assert_eq!(a, again);
        assert_ne!(a, b);
        assert!(a.as_str().starts_with("https://gateway.example/connect/"));
        assert_eq!(a.path().len(), CONNECT_PATH.len() + 32);
        for index in 2..MAX_PENDING {
            connects
                .open(&format!("p{index}"), "s", "k", &login())
                .unwrap();
        }
        assert!(connects.open("one-more", "s", "k", &login()).is_err());
    }

    #[tokio::test]
    async fn pages_refuse_what_no_connection_waits_for() {
        let connects = Arc::new(Connects::new("http://127.0.0.1:9".parse().unwrap()));
        let unknown = Arc::clone(&connects).connect_page("0123").await;
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
        for query in [
            None,
            Some("code=c"),
            Some("code=c&state=forged"),
            Some("%%"),
        ] {
            let answer = connects.callback_page(query).await;
            assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{query:?}");
        }
        // A link whose authorization cannot start says so, and is forgotten.
        let (url, _) = connects.open("alice", "s", "s#alice", &login()).unwrap();
        let nonce = url.path().trim_start_matches(CONNECT_PATH).to_owned();
        let failed = Arc::clone(&connects).connect_page(&nonce).await;
        assert_eq!(failed.status(), StatusCode::BAD_GATEWAY);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let gone = Arc::clone(&connects).connect_page(&nonce).await;
        assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    }
}
