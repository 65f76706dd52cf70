//! GraphQL schemas and operations read into tools: the same operations as data
//! ([`Operation`](toolkit_openapi::operations::Operation) = a tool definition + a request
//! template) that `toolkit-openapi` reads from OpenAPI documents, so that everything downstream
//! works unchanged: the runtime's `HttpSource` sends them (a `POST` of `{"query",
//! "operationName", "variables"}`), the generator writes them, the gateway serves them. No
//! executor of its own, no HTTP client, no async runtime.
//!
//! A schema is read from SDL or from an introspection result ([`GraphqlSchema::read`]) and
//! validated with apollo-compiler; a schema that does not validate is a [`SchemaError`] whose
//! [`Problem`]s say file, line and column. Then either:
//!
//! - **schema mode**, [`read_schema_tools`]: one tool per root `Query` and `Mutation` field, its
//!   arguments as the input, answering a default selection (scalars two levels deep, see
//!   [`ReadOptions::depth`]) or the `selection` the model writes, which [`SelectionCheck`]
//!   validates against the schema before any request;
//! - **operations mode**, [`read_operation_documents`]: one tool per named operation of
//!   `.graphql` files or a persisted-query manifest, its variables as the input.
//!
//! # Input schemas
//!
//! Arguments and variables become one JSON Schema 2020-12 object with `additionalProperties:
//! false`: `String` and `ID` a string, `Int` a 32-bit integer, `Float` a number, `Boolean` a
//! boolean, a custom scalar a string naming it, an enum or an input object a `$ref` into `$defs`
//! (an input object is strict too), a list an array; a non-null argument without a default is
//! required.
//!
//! # Annotations
//!
//! A query is read-only and idempotent; a mutation is neither and is destructive, so that a
//! default policy asks a person before it runs. Subscriptions are [`Skipped`].

mod documents;
mod hints;
mod input_schema;
mod introspection;
mod problem;
mod read;
mod schema;
mod schema_tools;
mod selection;
mod selection_check;
mod skipped;

pub use documents::{OperationDocument, read_operation_documents};
pub use problem::{Problem, SchemaError};
pub use read::{ReadOptions, ReadTools};
pub use schema::{GraphqlSchema, MAX_SCHEMA_LENGTH};
pub use schema_tools::read_schema_tools;
pub use selection_check::SelectionCheck;
pub use skipped::{SkipReason, Skipped};

#[cfg(test)]
mod tests;
