//! GraphQL endpoints as tool sources (feature `graphql`): the tools `toolkit-graphql` reads from
//! a schema — given as a file, or asked of the endpoint itself by [`introspect`] — sent by the
//! [`HttpSource`](crate::HttpSource), their `selection`s checked against the schema before
//! any request.
//!
//! ```no_run
//! use toolkit_core::ToolSource;
//! use toolkit_http::graphql::GraphqlSource;
//! use toolkit_http::client_builder;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // No schema given: the endpoint is introspected at the first listing or call.
//! let source = GraphqlSource::builder("shop", "https://example.com/graphql", client_builder().build()?)
//!     .build()?;
//! let tools = source.discover().await?;
//! # Ok(())
//! # }
//! ```

mod introspection;
mod source;

pub use introspection::{INTROSPECTION_QUERY, introspect};
pub use source::{GraphqlSource, GraphqlSourceBuilder, GraphqlSourceError};
pub use toolkit_graphql::{
    GraphqlSchema, MAX_SCHEMA_LENGTH, OperationDocument, ReadOptions, SchemaError,
};
