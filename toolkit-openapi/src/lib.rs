//! HTTP operations as data ([`operations`]) and the reader that makes them from OpenAPI 3.0 and
//! 3.1 (and 3.2) documents, Swagger 2.0 ones, and Google's Discovery documents
//! (`discoveryVersion: v1`; see [Discovery documents](self#discovery-documents)), the last two
//! converted: [`read_operations`]. No executor: `toolkit-http`'s `HttpSource` (`toolkit-runtime`'s feature `http`)
//! sends the operations; the generator (`toolkit-gen`) writes typed modules of them; the gateway
//! serves them. `toolkit-runtime` re-exports this crate as `http::` (the operations) and
//! `openapi::` (the reader).
//!
//! The reader takes a document already parsed ([`decode_document`] reads JSON or YAML text) and
//! fetches nothing: a reference to another document skips the operations that use it, and the
//! document's `servers` are listed in [`ReadOperations::servers`], never used — where requests go
//! is the host's to say.
//!
//! A Swagger 2.0 document is converted to OpenAPI 3.0 first, by this crate, and the result
//! read as any 3.0 document: `host`, `basePath` and `schemes` are its servers, the `body`
//! parameter its request body under the operations' `consumes` (its property keeps the
//! parameter's name), `formData` parameters a form (or a multipart body, which is skipped),
//! `collectionFormat` a query style (`tsv`, which 3.0 cannot write, skips its operation),
//! `securityDefinitions` security schemes, `definitions` the schemas, and AutoRest's
//! `x-ms-paths`, `x-nullable`, `x-ms-enum` and `x-ms-discriminator-value` are read. The paths
//! are the same in both, so a skip's location is the 2.0 document's.
//!
//! ```
//! use serde_json::json;
//! use toolkit_openapi::{ReadOptions, read_operations};
//!
//! let document = json!({
//!     "swagger": "2.0",
//!     "info": { "title": "Pets", "version": "1" },
//!     "host": "petstore.example.com",
//!     "basePath": "/v1",
//!     "paths": { "/pets": { "post": {
//!         "operationId": "add_pet",
//!         "parameters": [{ "name": "pet", "in": "body", "schema": { "$ref": "#/definitions/Pet" } }],
//!         "responses": { "200": { "description": "Added." } }
//!     } } },
//!     "definitions": { "Pet": { "type": "object", "x-nullable": true } }
//! });
//! let read = read_operations(&document, &ReadOptions::default())?;
//! assert_eq!(read.servers[0].url, "https://petstore.example.com/v1");
//! let add_pet = &read.operations[0];
//! assert_eq!(add_pet.request.body.as_ref().map(|body| body.property.as_str()), Some("pet"));
//! assert_eq!(add_pet.definition.input_schema()["$defs"]["Pet"]["type"], json!(["object", "null"]));
//! # Ok::<(), toolkit_openapi::NotOpenApi>(())
//! ```
//!
//! Each operation becomes a tool:
//!
//! - named by its `operationId`, or from its method and path when it has none
//!   (`get_pets_petId`);
//! - taking a property per parameter, named as the parameter in the characters agents accept,
//!   with the place before the name when two would share one or one is `body` (see
//!   [`naming`](self#naming)), and a property `body` for the request body (JSON, or a form),
//!   or the name its operation's `x-codegen-request-body-name` gives when no parameter has it
//!   (documents converted from Swagger 2.0 keep the body parameter's name there);
//! - whose input is one JSON Schema 2020-12 that stands alone: the document's schemas it refers
//!   to are under `$defs`, references rewritten, cycles kept as references; 3.0 schemas are made
//!   as 3.1 has them (`nullable`, boolean exclusive bounds, `example`);
//! - whose success answer's JSON Schema, when the document gives one (the first 2xx response
//!   with a JSON media type and a schema), is kept in [`ReadOperations::answers`], and is the
//!   definition's `outputSchema` when its root is an object;
//! - with the hints HTTP gives its method, and nothing guessed beyond: GET, HEAD, OPTIONS and
//!   TRACE are read-only, PUT and DELETE idempotent, POST and PATCH not, DELETE destructive.
//!
//! A parameter that carries a credential of one of the operation's security schemes (an API
//! key's header, query parameter or cookie, or `Authorization`) is no property of the input: a
//! model never gives a credential. [`ReadOperations::security`] lists those parameters, the
//! document's schemes and each operation's requirements, for the host to meet.
//!
//! An operation that cannot be a tool is [`Skipped`], with its [`SkipReason`] and its location
//! as a JSON pointer (`#/paths/~1pets~1{id}/post`): a body that is neither JSON nor a form, a
//! parameter in a non-default style or that is an object, a cookie it needs, a path its
//! parameters do not match, a reference to anything but a schema of the document, a name
//! another operation has. Nothing about one operation fails the document.
//!
//! # Naming
//!
//! Property names are made of `A-Z a-z 0-9 _ -`, every other character as `_`, cut to 64
//! characters. When two parameters would share a name, or one is named `body`, the place comes
//! first: `path_id`, `query_id`, `query_body`. Should two still share one, the later end in
//! `_2`, `_3`, …; a property named otherwise than its parameter says in its description where
//! its value goes.
//!
//! # Discovery documents
//!
//! A document with a `discoveryVersion` is one of Google's Discovery documents (the 611 that
//! PyPI `google-api-python-client` ships are all read), converted to OpenAPI 3.1 and read as
//! one: each method is an operation named from its `id` (`drive.files.list` →
//! `drive_files_list`) below the server `rootUrl` + `servicePath`; `{+name}` is a path
//! parameter in reserved expansion
//! ([`allow_reserved`](operations::Parameter::allow_reserved)), whose value fills whole
//! segments; a `repeated` query parameter is a list sent as a key per value; schemas are the
//! document's by id, 64-bit integers strings; of the global parameters only `fields` is a
//! property; the OAuth 2.0 scopes are a security scheme; a media upload is skipped (its body
//! is the media), located at `#/resources/…/methods/…/mediaUpload`. Another
//! `discoveryVersion` is an error.
//!
//! ```
//! use serde_json::json;
//! use toolkit_openapi::{ReadOptions, read_operations};
//!
//! let document = json!({
//!     "discoveryVersion": "v1",
//!     "rootUrl": "https://pubsub.googleapis.com/",
//!     "servicePath": "",
//!     "resources": { "projects": { "resources": { "topics": { "methods": { "get": {
//!         "id": "pubsub.projects.topics.get",
//!         "httpMethod": "GET",
//!         "path": "v1/{+topic}",
//!         "parameters": { "topic": { "type": "string", "location": "path", "required": true } }
//!     } } } } } }
//! });
//! let read = read_operations(&document, &ReadOptions::default())?;
//! let operation = &read.operations[0];
//! assert_eq!(operation.name(), "pubsub_projects_topics_get");
//! assert_eq!(operation.request.path, "/v1/{topic}");
//! assert!(operation.request.parameters[0].allow_reserved);
//! assert_eq!(read.servers[0].url, "https://pubsub.googleapis.com/");
//! # Ok::<(), toolkit_openapi::NotOpenApi>(())
//! ```
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use toolkit_openapi::{ReadOptions, read_operations};
//!
//! let document = json!({
//!     "openapi": "3.0.3",
//!     "info": { "title": "Pets", "version": "1" },
//!     "servers": [{ "url": "https://petstore.example.com/v1" }],
//!     "paths": {
//!         "/pets/{id}": {
//!             "get": {
//!                 "operationId": "get_pet",
//!                 "parameters": [
//!                     { "name": "id", "in": "path", "required": true, "schema": { "type": "integer" } }
//!                 ],
//!                 "responses": { "200": { "description": "The pet." } }
//!             },
//!             "put": {
//!                 "operationId": "upload_photo",
//!                 "parameters": [
//!                     { "name": "id", "in": "path", "required": true, "schema": { "type": "integer" } }
//!                 ],
//!                 "requestBody": { "content": { "image/png": {} } },
//!                 "responses": { "200": { "description": "Done." } }
//!             }
//!         }
//!     }
//! });
//! let read = read_operations(&document, &ReadOptions::default())?;
//! assert_eq!(read.operations[0].name(), "get_pet");
//! assert_eq!(read.operations[0].definition.annotations.read_only, Some(true));
//! assert_eq!(read.skipped[0].location, "#/paths/~1pets~1{id}/put");
//! assert_eq!(read.skipped[0].reason.kind(), "bodyNotJson");
//! assert_eq!(read.servers[0].url, "https://petstore.example.com/v1");
//! # Ok::<(), toolkit_openapi::NotOpenApi>(())
//! ```

#![deny(missing_docs)]

pub mod operations;

mod answer;
mod def_names;
mod defs;
mod discovery;
mod document;
mod naming;
mod pointer;
mod read;
mod reader;
mod schema;
mod security;
mod skipped;
mod swagger;
mod visibility;
mod webhooks;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use document::{DecodeError, decode_document};
pub use read::read_operations;
pub use security::{CredentialParameter, Security};
pub use skipped::{SkipReason, Skipped};
pub use webhooks::{Webhook, read_webhooks};

use operations::Operation;

/// What [`read_operations`] found in a document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadOperations {
    /// The operations that are tools, in the document's order (paths, then methods).
    pub operations: Vec<Operation>,
    /// The operations that are not, each with where it is and why.
    pub skipped: Vec<Skipped>,
    /// The document's servers, listed and never used.
    pub servers: Vec<Server>,
    /// The document's security schemes, each operation's requirements, and the parameters left
    /// out of inputs because they carry a credential.
    #[serde(default, skip_serializing_if = "Security::is_empty")]
    pub security: Security,
    /// The JSON Schema of each operation's success answer, by operation name, standing alone
    /// with its `$defs` (as an input schema does): the first 2xx response, by status and `2XX`
    /// last, `default` never, whose content has a JSON media type with a schema. An operation
    /// with none is not here. When the root is an object the operation's definition also
    /// carries it as its `outputSchema`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub answers: std::collections::BTreeMap<String, toolkit_core::JsonObject>,
    /// Read with [`ReadOptions::shared_defs`]: every `$defs` entry some schema names, each
    /// once, by name (empty otherwise). The schemas of `operations` and `answers` then list
    /// their entries' names (`"$defs": ["Pet", "Tag"]`) instead of holding them, as
    /// [`encode_shared_operations`](crate::operations::encode_shared_operations) writes a catalog.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub defs: toolkit_core::JsonObject,
}

impl ReadOperations {
    /// The share of the document's operations read as tools, from 0 to 1 (1 for a document with
    /// none).
    pub fn share(&self) -> f64 {
        let total = self.operations.len() + self.skipped.len();
        if total == 0 {
            1.0
        } else {
            #[allow(clippy::cast_precision_loss)]
            let share = self.operations.len() as f64 / total as f64;
            share
        }
    }
}

/// A server a document names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Server {
    /// Its URL, as the document writes it (it may hold `{variables}`).
    pub url: String,
    /// What the document says of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// How [`read_operations`] reads.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Whether operations marked `deprecated` are read (they are by default).
    pub deprecated: bool,
    /// Whether the schemas name their `$defs` entries, held once in [`ReadOperations::defs`],
    /// rather than each holding a copy of every entry it reaches (off by default: a definition
    /// then stands alone). A generator's form: its cost grows with the document, where the
    /// copies grow with the operations times the schemas each reaches (on Stripe's
    /// description, 222,000 copies of 775 schemas).
    pub shared_defs: bool,
    /// The most bytes of JSON the copies of the document's schemas may take when each
    /// schema holds its own (not [`ReadOptions::shared_defs`](Self#structfield.shared_defs)):
    /// an operation that would take them past it is [`Skipped`] with
    /// [`SkipReason::OverBudget`], so that a document whose operations each reach most of its
    /// schemas cannot exhaust the host's memory ([`DEFAULT_COPY_BUDGET`] unless set).
    pub copy_budget: usize,
    /// Whether each operation's success answer is read: its definition's `outputSchema` and
    /// [`ReadOperations::answers`] (on by default). A host that serves no output schema leaves
    /// them out, and with them their copies of the schemas they reach: on Microsoft Graph
    /// beta, most of the copies.
    pub answers: bool,
}

/// The default [`ReadOptions::copy_budget`]: 1 GB of JSON, about 4.5 GB as read (Stripe's
/// description copies 310 MB standing alone, Microsoft Graph beta's more than ten times that).
pub const DEFAULT_COPY_BUDGET: usize = 1_000_000_000;

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            deprecated: true,
            shared_defs: false,
            copy_budget: DEFAULT_COPY_BUDGET,
            answers: true,
        }
    }
}

impl ReadOptions {
    /// These options with deprecated operations read or left out.
    ///
    /// ```
    /// let options = toolkit_openapi::ReadOptions::default().deprecated(false);
    /// assert!(!options.deprecated);
    /// ```
    #[must_use]
    pub fn deprecated(mut self, read: bool) -> Self {
        self.deprecated = read;
        self
    }

    /// These options with the schemas' `$defs` entries shared or held by each schema (see
    /// [`ReadOptions::shared_defs`](Self#structfield.shared_defs)).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_openapi::{ReadOptions, read_operations};
    ///
    /// let document = json!({
    ///     "openapi": "3.1.0",
    ///     "info": { "title": "Pets", "version": "1" },
    ///     "paths": { "/pets": { "post": {
    ///         "operationId": "add_pet",
    ///         "requestBody": { "content": { "application/json": {
    ///             "schema": { "$ref": "#/components/schemas/Pet" } } } },
    ///         "responses": {}
    ///     } } },
    ///     "components": { "schemas": { "Pet": { "type": "object" } } }
    /// });
    /// let read = read_operations(&document, &ReadOptions::default().shared_defs(true))?;
    /// assert_eq!(read.operations[0].definition.input_schema()["$defs"], json!(["Pet"]));
    /// assert_eq!(read.defs["Pet"], json!({ "type": "object" }));
    /// # Ok::<(), toolkit_openapi::NotOpenApi>(())
    /// ```
    #[must_use]
    pub fn shared_defs(mut self, shared: bool) -> Self {
        self.shared_defs = shared;
        self
    }

    /// These options with at most `bytes` of JSON copied into schemas that stand alone (see
    /// [`ReadOptions::copy_budget`](Self#structfield.copy_budget)).
    ///
    /// ```
    /// let options = toolkit_openapi::ReadOptions::default().copy_budget(1 << 20);
    /// assert_eq!(options.copy_budget, 1 << 20);
    /// ```
    #[must_use]
    pub fn copy_budget(mut self, bytes: usize) -> Self {
        self.copy_budget = bytes;
        self
    }

    /// These options with the operations' success answers read or left out (see
    /// [`ReadOptions::answers`](Self#structfield.answers)).
    ///
    /// ```
    /// let options = toolkit_openapi::ReadOptions::default().answers(false);
    /// assert!(!options.answers);
    /// ```
    #[must_use]
    pub fn answers(mut self, read: bool) -> Self {
        self.answers = read;
        self
    }
}

/// A document that is no OpenAPI 3, Swagger 2.0 or Discovery `v1` document: the one error that
/// fails a whole read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotOpenApi {
    message: String,
}

impl NotOpenApi {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for NotOpenApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for NotOpenApi {}

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
