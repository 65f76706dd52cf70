//! [`AuthorizationCallback`]: how the user is sent to the authorization server, and how the
//! redirect back is received.

use reqwest::Url;

use super::AuthError;
use toolkit_core::BoxFuture;

/// Sends the user to an authorization URL and gives back the redirect the browser was sent to:
/// a command line opens a browser (or prints the URL) and listens on a loopback port; a test
/// follows the URL itself.
///
/// The redirect URI must be on loopback (`http://127.0.0.1:<port>/…`, `http://[::1]:…` or
/// `http://localhost:…`, RFC 8252 §7.3): an [`OAuthClient`](super::OAuthClient) refuses any
/// other, unless built with
/// [`hosted_redirect`](super::OAuthClientBuilder::hosted_redirect), which takes an `https` one
/// too (a gateway's own page, where its users' browsers come back). The client checks what comes back (its `state`, its `iss`, that it is the redirect
/// URI), so a callback need only hand it over.
pub trait AuthorizationCallback: Send + Sync + 'static {
    /// The redirect URI registered with the authorization server and sent in each authorization
    /// request.
    fn redirect_uri(&self) -> Url;

    /// Sends the user to `authorization_url` (only ever an `https` URL, or `http` on loopback for
    /// a server on loopback) and gives back the full URL of the redirect received, query
    /// included. Fails with [`AuthError::Refused`] if the user gave up; the client bounds the
    /// wait with [`OAuthOptions::authorization_timeout`](super::OAuthOptions).
    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, AuthError>>;
}
