//! HTTP APIs as tool sources: [`Operation`]s as data and the [`HttpSource`] that sends them.
//!
//! An operation is a tool that is an HTTP request: its [`ToolDefinition`](crate::ToolDefinition)
//! and a [`RequestTemplate`] — the method, the path, where each property of the input goes (a
//! path segment, a query parameter, a header) and which property holds the body. Both are data,
//! so a host stores them in its catalog. They come from an OpenAPI document
//! ([`crate::openapi`], feature `openapi`) or are written by hand.
//!
//! An [`HttpSource`] sends the operations' requests to one base URL over an [`HttpClient`] the
//! host built with its credentials — a `reqwest::Client`, best started from [`client_builder`]
//! for its redirect policy, or a [`HeaderClient`] whose headers win over any parameter. The
//! source never takes a credential, and nothing a model gives can add a header, change the
//! path's shape or reach another host.

mod answer;
pub mod client;
mod encoding;
mod operation;
mod security;
mod source;
pub(crate) mod template;

pub use answer::MAX_ERROR_WORDS;
pub use client::{HeaderClient, HttpClient, MAX_REDIRECTS, client_builder, same_origin_redirects};
pub use operation::{Body, BodyEncoding, Location, Operation, Parameter, RequestTemplate};
pub use security::{
    Credential, CredentialProvider, Credentials, KeyLocation, OAuthFlow, SecurityRequirement,
    SecurityScheme,
};
pub use source::{
    DEFAULT_MAX_ANSWER_LENGTH, DEFAULT_TIMEOUT, HttpSource, HttpSourceBuilder, HttpSourceError,
};
