//! The front door of the reader: [`read_operations`] takes an OpenAPI 3 document as it is, and
//! a Swagger 2.0 or Google Discovery document converted to one first.

use serde_json::Value;

use super::{NotOpenApi, ReadOperations, ReadOptions, discovery, reader, swagger};

/// Reads the operations of an OpenAPI 3.0.x, 3.1.x or 3.2.x document, of a Swagger 2.0 one
/// converted to OpenAPI 3.0 first, or of a Google Discovery document (`discoveryVersion: v1`,
/// recognised by that key and converted: see the crate docs) — JSON already parsed; see
/// [`decode_document`](super::decode_document) for text.
///
/// Every operation becomes an [`Operation`](crate::operations::Operation) or a
/// [`Skipped`](super::Skipped) with its reason; nothing about one
/// operation fails the document. Nothing is fetched: a reference to another document skips the
/// operations that use it, and the `servers` are listed, never used.
///
/// # Errors
///
/// [`NotOpenApi`] when the document is no OpenAPI 3 or Swagger 2.0 document (a Swagger 1.2
/// one, one with no `openapi` field, not an object), or a Discovery document of another version
/// than `v1`.
pub fn read_operations(
    document: &Value,
    options: &ReadOptions,
) -> Result<ReadOperations, NotOpenApi> {
    if document.get("swagger").is_some() {
        return swagger::read(document, options);
    }
    if discovery::is_discovery(document) {
        return discovery::read(document, options);
    }
    reader::read_openapi(document, options)
}
