//! HTTP APIs as tool sources: [`Operation`]s as data and the [`HttpSource`] that sends them.
//!
//! An operation is a tool that is an HTTP request: its [`ToolDefinition`](toolkit_core::ToolDefinition)
//! and a [`RequestTemplate`] — the method, the path, where each property of the input goes (a
//! path segment, a query parameter, a header) and which property holds the body. Both are data,
//! so a host stores them in its catalog. They come from an OpenAPI document (the `toolkit-openapi`
//! crate's reader) or are written by hand.
//!
//! An [`HttpSource`] sends the operations' requests to one base URL over an [`HttpClient`] the
//! host built with its credentials — a `reqwest::Client`, best started from [`client_builder`]
//! for its redirect policy, or a [`HeaderClient`] whose headers win over any parameter. The
//! source never takes a credential, and nothing a model gives can add a header, change the
//! path's shape or reach another host.
//!
//! The operations and their templates are data, with no executor: the `toolkit-openapi` crate's,
//! re-exported here. This crate is what generated OpenAPI code needs at run time beside the core,
//! and nothing more; `toolkit-runtime`'s feature `http` re-exports it as `toolkit_runtime::http`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub(crate) mod answer;
pub mod client;
pub mod codegen;
mod credential_text;
mod credentials;
#[cfg(feature = "graphql")]
pub mod graphql;
mod graphql_answer;
mod redaction;
mod source;
mod telemetry;

pub use answer::MAX_ERROR_WORDS;
pub use client::{HeaderClient, HttpClient, MAX_REDIRECTS, client_builder, same_origin_redirects};
pub use credential_text::CredentialTextError;
pub use credentials::{ClientCredentialsFlow, Credential, CredentialProvider, Credentials};
pub use redaction::Redactor;
pub use source::{
    DEFAULT_MAX_ANSWER_LENGTH, DEFAULT_TIMEOUT, HttpSource, HttpSourceBuilder, HttpSourceError,
};
pub use toolkit_openapi::operations::{
    Body, BodyEncoding, CompiledTemplate, FilledRequest, GraphqlRequest, GraphqlSelection,
    KeyLocation, Location, OAuthFlow, Operation, OperationsError, Parameter, QueryStyle,
    RequestTemplate, SecurityRequirement, SecurityScheme, decode_operations, encode_operations,
    encode_shared_operations, standing_alone,
};
