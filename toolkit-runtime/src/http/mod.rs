//! HTTP APIs as tool sources: [`Operation`]s as data and the [`HttpSource`] that sends them.
//!
//! An operation is a tool that is an HTTP request: its [`ToolDefinition`](toolkit_core::ToolDefinition)
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
//!
//! The operations and their templates are data (feature `operations`, which a generator needs,
//! with no executor): the `toolkit-openapi` crate's, re-exported here. The source that sends
//! them is feature `http`.

#[cfg(feature = "http")]
pub(crate) mod answer;
#[cfg(feature = "http")]
pub mod client;
#[cfg(feature = "http")]
mod credential_text;
#[cfg(feature = "http")]
mod credentials;
#[cfg(feature = "http")]
mod graphql_answer;
#[cfg(feature = "http")]
mod redaction;
#[cfg(feature = "http")]
mod source;

#[cfg(feature = "http")]
pub use answer::MAX_ERROR_WORDS;
#[cfg(feature = "http")]
pub use client::{HeaderClient, HttpClient, MAX_REDIRECTS, client_builder, same_origin_redirects};
#[cfg(feature = "http")]
pub use credential_text::CredentialTextError;
#[cfg(feature = "http")]
pub use credentials::{Credential, CredentialProvider, Credentials};
#[cfg(feature = "http")]
pub use redaction::Redactor;
#[cfg(feature = "http")]
pub use source::{
    DEFAULT_MAX_ANSWER_LENGTH, DEFAULT_TIMEOUT, HttpSource, HttpSourceBuilder, HttpSourceError,
};
pub use toolkit_openapi::operations::{
    Body, BodyEncoding, CompiledTemplate, FilledRequest, GraphqlRequest, GraphqlSelection,
    KeyLocation, Location, OAuthFlow, Operation, OperationsError, Parameter, QueryStyle,
    RequestTemplate, SecurityRequirement, SecurityScheme, decode_operations, encode_operations,
    encode_shared_operations, standing_alone,
};
