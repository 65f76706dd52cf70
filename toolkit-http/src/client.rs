//! The client an HTTP source sends its requests over, which the host builds with its
//! credentials: [`HttpClient`], [`HeaderClient`], and [`client_builder`] for the redirect policy
//! this crate recommends.
//!
//! # Credentials come last and win
//!
//! `reqwest` fills a client's default headers only where a request has none of that name, so a
//! header parameter of a document that shares a name with a credential header (an `X-Api-Key`
//! the document also lists as a parameter) would take its place. The source refuses templates
//! that fill `Authorization`, `Cookie` and the other headers HTTP or the client set, but it
//! cannot know the names of a client's custom default headers. Give custom credential headers
//! through [`HeaderClient`], which sets them on every request after the source has filled it,
//! over whatever the model gave.
//!
//! # Redirects
//!
//! A redirect to another origin must never carry the client's credentials, and `reqwest`'s
//! default policy follows such redirects with every default header but `Authorization` and
//! `Cookie`. The host builds the client, so the source cannot change its policy; what this crate
//! does:
//!
//! - [`client_builder`] starts a `reqwest::ClientBuilder` whose policy ([`same_origin_redirects`])
//!   follows up to ten redirects within the origin of the first request and stops at one to any
//!   other origin — the stopped redirect reaches the source as a 3xx answer, which the model reads
//!   as a failed call. Build clients from it (or with `redirect::Policy::none()`).
//! - Whatever the client's policy, the source refuses an answer that came from another origin
//!   than its base URL's and never reads its body, so nothing another site says reaches the model.

use std::fmt;

use reqwest::header::HeaderMap;
use reqwest::redirect::Policy;
use reqwest::{Request, Response};

use toolkit_core::BoxFuture;

/// What sends a request: a `reqwest::Client` the host built, or anything that wraps one (adds
/// headers, signs requests, logs).
///
/// The source never takes a credential: the client carries them.
pub trait HttpClient: Send + Sync + 'static {
    /// Sends `request` and gives the response once its headers have arrived. Dropping the future
    /// aborts the request.
    fn execute(&self, request: Request) -> BoxFuture<'_, Result<Response, reqwest::Error>>;
}

impl HttpClient for reqwest::Client {
    fn execute(&self, request: Request) -> BoxFuture<'_, Result<Response, reqwest::Error>> {
        Box::pin(reqwest::Client::execute(self, request))
    }
}

impl<C: HttpClient + ?Sized> HttpClient for std::sync::Arc<C> {
    fn execute(&self, request: Request) -> BoxFuture<'_, Result<Response, reqwest::Error>> {
        (**self).execute(request)
    }
}

/// A client that sets `headers` on every request last, over anything the request had: the way to
/// give credential headers that must win over a header parameter of the same name.
///
/// ```
/// use reqwest::header::{HeaderMap, HeaderValue};
/// use toolkit_http::{HeaderClient, client_builder};
///
/// let mut headers = HeaderMap::new();
/// let mut key = HeaderValue::from_static("secret");
/// key.set_sensitive(true);
/// headers.insert("x-api-key", key);
/// let client = HeaderClient::new(client_builder().build()?, headers);
/// # Ok::<(), reqwest::Error>(())
/// ```
#[derive(Clone)]
pub struct HeaderClient {
    client: reqwest::Client,
    headers: HeaderMap,
}

impl HeaderClient {
    /// A client that sends over `client` with `headers` set last on every request.
    pub fn new(client: reqwest::Client, headers: HeaderMap) -> Self {
        Self { client, headers }
    }
}

impl fmt::Debug for HeaderClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names only: the values are credentials.
        f.debug_struct("HeaderClient")
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl HttpClient for HeaderClient {
    fn execute(&self, mut request: Request) -> BoxFuture<'_, Result<Response, reqwest::Error>> {
        for (name, value) in &self.headers {
            request.headers_mut().insert(name.clone(), value.clone());
        }
        Box::pin(self.client.execute(request))
    }
}

/// A `reqwest::ClientBuilder` with [`same_origin_redirects`]: start the client of an HTTP source
/// here, add its credentials, and build it.
///
/// ```
/// use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
///
/// let mut headers = HeaderMap::new();
/// let mut token = HeaderValue::from_static("Bearer secret");
/// token.set_sensitive(true);
/// headers.insert(AUTHORIZATION, token);
/// let client = toolkit_http::client_builder()
///     .default_headers(headers)
///     .user_agent("my-agent/1.0")
///     .build()?;
/// # Ok::<(), reqwest::Error>(())
/// ```
pub fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().redirect(same_origin_redirects())
}

/// The most redirects [`same_origin_redirects`] follows in one request.
pub const MAX_REDIRECTS: usize = 10;

/// A redirect policy that follows up to [`MAX_REDIRECTS`] redirects within the origin (scheme,
/// host and port) of the first request, and stops at a redirect to any other origin, which then
/// reaches the caller as the 3xx answer it is.
pub fn same_origin_redirects() -> Policy {
    Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}
