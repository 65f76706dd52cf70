//! OAuth 2.1 credentials, where they belong: for an HTTP API's security schemes,
//! [`ClientCredentials`] (a machine's tokens, also as the flow `toolkit_http::Credentials::with_text`
//! reads a `client_id:client_secret` with) and [`AuthorizationCode`] (a user's authorization);
//! with feature `mcp`, the MCP authorization specification on the client side, as `OAuthClient`,
//! an HTTP client an MCP source sends through.
//!
//! The host plugs in two pieces: a [`TokenStore`] that keeps what an authorization gave (a
//! [`FileStore`] with owner-only permissions for a command line or a gateway, a
//! [`MemoryStore`], or its own), and an [`AuthorizationCallback`] that sends the user to the
//! authorization URL and hands back the redirect. Everything else — discovery, registration,
//! PKCE, `state`, `resource`, scopes and step-up, refresh — is the client's.
//!
//! - `client.rs`: [`OAuthClient`], the requests, the answers 401 and 403.
//! - `challenge.rs`: `WWW-Authenticate`; `discovery.rs`: resource and authorization server
//!   metadata; `registration.rs`: client identity and token endpoint authentication;
//!   `flow.rs`: the authorization code flow and refresh (with the `oauth2` crate).
//! - `client_credentials.rs`: [`ClientCredentials`], OAuth 2 client
//!   credentials for an OpenAPI scheme of an `HttpSource`; `authorization_code.rs`:
//!   [`AuthorizationCode`], a user's authorization for an OpenAPI `authorizationCode` or
//!   `openIdConnect` scheme.
//! - `machine.rs`: [`MachineCredentials`], a client with no user authorized with the client
//!   credentials grant (secret or `private_key_jwt`) in place of a user's authorization.
//! - `grant.rs`: [`Grant`]; `store.rs`: [`TokenStore`], [`MemoryStore`], [`FileStore`];
//!   `file_lock.rs`: one writer at a time of a file store, in and across processes;
//!   `redis_store.rs` (with feature `redis-store`): [`RedisStore`], grants in Redis for replicas
//!   on several machines;
//!   `callback.rs`: [`AuthorizationCallback`]; `loopback.rs`: [`LoopbackCallback`], the redirect
//!   received on a loopback port; `secret.rs`: [`Secret`].
//! - `policy.rs`: which URLs metadata may send the client to; `fetch.rs`: the bounded requests.
//!
//! No token, code, verifier or client secret is ever in a failure, a log line or a `Debug`
//! output.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

mod authorization_code;
mod authorization_server;
mod callback;
#[cfg(feature = "mcp")]
mod challenge;
#[cfg(feature = "mcp")]
mod client;
mod client_credentials;
#[cfg(feature = "mcp")]
mod discovery;
mod error;
mod fetch;
mod file_lock;
mod flow;
mod grant;
mod loopback;
#[cfg(feature = "mcp")]
mod machine;
mod policy;
#[cfg(feature = "redis-store")]
mod redis_store;
#[cfg(feature = "mcp")]
mod registration;
mod secret;
mod store;

pub use authorization_code::AuthorizationCode;
pub use callback::AuthorizationCallback;
#[cfg(feature = "mcp")]
pub use challenge::MAX_CHALLENGE_BYTES;
#[cfg(feature = "mcp")]
pub use client::{OAuthClient, OAuthClientBuilder, OAuthOptions};
pub use client_credentials::ClientCredentials;
pub use error::AuthError;
pub use fetch::MAX_METADATA_BYTES;
pub use grant::{ClientAuth, Grant, RegisteredClient};
pub use loopback::{LoopbackCallback, MAX_CALLBACK_REQUEST_BYTES};
#[cfg(feature = "mcp")]
pub use machine::MachineCredentials;
#[cfg(feature = "redis-store")]
pub use redis_store::RedisStore;
pub use secret::Secret;
pub use store::{Change, ChangeFn, FileStore, MemoryStore, TokenStore, Updated};
