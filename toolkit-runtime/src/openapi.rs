//! Reading OpenAPI 3.0 and 3.1 documents into [`Operation`](crate::http::Operation)s of the
//! HTTP source: [`read_operations`]. The reader is the `toolkit-openapi` crate's (no executor);
//! see its documentation for the rules (names, inputs, answers, credentials, what is skipped).
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use toolkit_runtime::openapi::{ReadOptions, read_operations};
//!
//! let document = json!({
//!     "openapi": "3.1.0",
//!     "info": { "title": "Pets", "version": "1" },
//!     "paths": { "/pets": { "get": { "operationId": "list_pets", "responses": { "200": { "description": "Pets." } } } } }
//! });
//! let read = read_operations(&document, &ReadOptions::default())?;
//! assert_eq!(read.operations[0].name(), "list_pets");
//! # Ok::<(), toolkit_runtime::openapi::NotOpenApi>(())
//! ```

pub use toolkit_openapi::{
    CredentialParameter, DEFAULT_COPY_BUDGET, DecodeError, NotOpenApi, ReadOperations, ReadOptions,
    Security, Server, SkipReason, Skipped, Webhook, decode_document, read_operations,
    read_webhooks,
};
