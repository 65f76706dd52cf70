//! [`LoopbackCallback`]: the redirect received on a loopback port, as a command line does it
//! (RFC 8252 §7.3).
//!
//! The listener is written here over `tokio::net` (one GET request line read, one short answer
//! written): an HTTP server crate would be a large dependency for reading one request.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{AuthError, AuthorizationCallback};
use toolkit_core::BoxFuture;

/// The most bytes of a request to the loopback listener read: 8 KiB.
pub const MAX_CALLBACK_REQUEST_BYTES: usize = 8 * 1024;

/// How long one connection to the listener may take to send its request.
const CONNECTION_WAIT: Duration = Duration::from_secs(10);

/// The path the redirect comes back to.
const CALLBACK_PATH: &str = "/callback";

type Open = dyn Fn(&Url) -> Result<(), AuthError> + Send + Sync;

/// Receives the redirect on `http://127.0.0.1:<port>/callback`, a listener on loopback only: the
/// user is sent to the authorization URL by `open` (which opens a browser, or prints the URL for
/// the user to open — never through a shell), and the redirect is the first request to the
/// callback path whose `state` is the authorization URL's. A request to another path is answered
/// 404, one to the callback path with another `state` (a forged one) an error page, and the wait
/// goes on (the client bounds it with
/// [`OAuthOptions::authorization_timeout`](super::OAuthOptions)).
///
/// ```no_run
/// use toolkit_auth::LoopbackCallback;
///
/// # async fn run() -> Result<(), toolkit_auth::AuthError> {
/// let callback = LoopbackCallback::bind(0, |url| {
///     eprintln!("Open this address to authorize: {url}");
///     Ok(())
/// })
/// .await?;
/// # Ok(()) }
/// ```
pub struct LoopbackCallback {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: Url,
    open: Arc<Open>,
}

impl fmt::Debug for LoopbackCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackCallback")
            .field("redirect_uri", &self.redirect_uri.as_str())
            .finish_non_exhaustive()
    }
}

impl LoopbackCallback {
    /// Listens on `127.0.0.1:port` (`0`: a port the system picks) and sends users on with `open`.
    ///
    /// # Errors
    ///
    /// [`AuthError::Unavailable`] when the port cannot be bound.
    pub async fn bind(
        port: u16,
        open: impl Fn(&Url) -> Result<(), AuthError> + Send + Sync + 'static,
    ) -> Result<Self, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|_| {
            AuthError::unavailable("the loopback port for the redirect cannot be bound")
        })?;
        let port = listener
            .local_addr()
            .map_err(|_| AuthError::unavailable("the loopback port has no address"))?
            .port();
        let redirect_uri = Url::parse(&format!("http://127.0.0.1:{port}{CALLBACK_PATH}"))
            .map_err(|_| AuthError::unavailable("the redirect URI cannot be made"))?;
        Ok(Self {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri,
            open: Arc::new(open),
        })
    }

    /// Waits for the redirect: the first GET of the callback path with `state` (any, when the
    /// authorization URL had none).
    async fn receive(&self, state: Option<&str>) -> Result<Url, AuthError> {
        let listener = self.listener.lock().await;
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let target =
                match tokio::time::timeout(CONNECTION_WAIT, request_target(&mut stream)).await {
                    Ok(Some(target)) => target,
                    _ => {
                        let _ = stream.write_all(ANSWER_BAD_REQUEST).await;
                        continue;
                    }
                };
            let Ok(received) = self.redirect_uri.join(&target) else {
                let _ = stream.write_all(ANSWER_BAD_REQUEST).await;
                continue;
            };
            if received.path() != CALLBACK_PATH {
                let _ = stream.write_all(ANSWER_NOT_FOUND).await;
                continue;
            }
            if state.is_some() && state_of(&received).as_deref() != state {
                let _ = stream.write_all(ANSWER_OTHER_STATE).await;
                continue;
            }
            let _ = stream.write_all(ANSWER_DONE).await;
            let _ = stream.shutdown().await;
            return Ok(received);
        }
    }
}

const ANSWER_DONE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\ncontent-length: 54\r\n\r\nAuthorization received. You can close this window now.";
const ANSWER_OTHER_STATE: &[u8] = b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\ncontent-length: 64\r\n\r\nThis is not the authorization this client waits for (its state).";
const ANSWER_NOT_FOUND: &[u8] =
    b"HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
const ANSWER_BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";

/// The `state` of a URL's query, if it has one.
fn state_of(url: &Url) -> Option<String> {
    url.query_pairs()
        .find(|(name, _)| name == "state")
        .map(|(_, value)| value.into_owned())
}

/// The target of a `GET <target> HTTP/1.x` request line, read within the size cap.
async fn request_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(2).any(|pair| pair == b"\r\n") {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 || head.len() + read > MAX_CALLBACK_REQUEST_BYTES {
            return None;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = std::str::from_utf8(&head).ok()?.lines().next()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    (method == "GET" && target.starts_with('/') && version.starts_with("HTTP/1."))
        .then(|| target.to_owned())
}

impl AuthorizationCallback for LoopbackCallback {
    fn redirect_uri(&self) -> Url {
        self.redirect_uri.clone()
    }

    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async move {
            let state = state_of(&authorization_url);
            (self.open)(&authorization_url)?;
            self.receive(state.as_deref()).await
        })
    }
}
