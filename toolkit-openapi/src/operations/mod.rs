//! HTTP operations as data: an [`Operation`] is a tool that is an HTTP request, its
//! [`ToolDefinition`](toolkit_core::ToolDefinition) and a [`RequestTemplate`] — the method, the
//! path, where each property of the input goes (a path segment, a query parameter in its style,
//! a header) and which property holds the body.
//!
//! Both are data, so a host stores them in its catalog ([`encode_operations`],
//! [`decode_operations`]). They come from an OpenAPI document ([`read_operations`](crate::read_operations))
//! or are written by hand. A [`CompiledTemplate`] is a template checked once and filled on every
//! call into a [`FilledRequest`]; `toolkit-http`'s `HttpSource` sends it.

mod catalog;
mod encoding;
mod operation;
mod security;
mod template;

pub use catalog::{
    OperationsError, decode_operations, encode_operations, encode_shared_operations, standing_alone,
};
pub use operation::{
    Body, BodyEncoding, GraphqlRequest, GraphqlSelection, Location, Operation, Parameter,
    QueryStyle, RequestTemplate,
};
pub use security::{KeyLocation, OAuthFlow, SecurityRequirement, SecurityScheme};
pub use template::{CompiledTemplate, FilledRequest};
