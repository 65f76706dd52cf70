//! What an MCP source sends its HTTP requests over: [`McpHttpClient`].

use reqwest::{Client, Request, Response};

use super::transport::status::transport_failure;
use toolkit_core::{BoxFuture, Reason};

/// What an MCP source over HTTP sends its requests over: a `reqwest::Client` the host built, or
/// a client that wraps one and adds what a request needs on its way — such as
/// `toolkit_auth::OAuthClient` (feature `mcp` of `toolkit-auth`), which puts a token on each request,
/// gets one when the server asks for it (401) or asks for more (403 `insufficient_scope`), and
/// refreshes it, without the source being built again.
///
/// The source builds each request with [`client`](McpHttpClient::client) and hands it to
/// [`send`](McpHttpClient::send); a client that can tell why it did not send (credentials it
/// could not get, an authorization server that is down) says so as a [`Reason`], which the
/// source fails with.
pub trait McpHttpClient: Send + Sync + 'static {
    /// The client requests are built with (its default headers, timeout and redirect policy
    /// apply when it sends them).
    fn client(&self) -> &Client;

    /// Sends `request` and gives the response once its headers have arrived. Dropping the
    /// future aborts the request. By default: [`client`](McpHttpClient::client) executes it, and
    /// a failure to reach the server is [`Reason::Unavailable`] (its description names no URL).
    fn send(&self, request: Request) -> BoxFuture<'_, Result<Response, Reason>> {
        let sent = self.client().execute(request);
        Box::pin(async move { sent.await.map_err(transport_failure) })
    }
}

impl McpHttpClient for Client {
    fn client(&self) -> &Client {
        self
    }
}
