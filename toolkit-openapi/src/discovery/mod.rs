//! Google's Discovery documents (`discoveryVersion: v1`), read into the same operations as an
//! OpenAPI document: [`read`], which [`read_operations`](crate::read_operations) calls when a
//! document has a `discoveryVersion`.
//!
//! The document is converted into an OpenAPI 3.1 document ([`convert`]) that the OpenAPI
//! reader reads, so its operations, skips, schemas and security are made by the same rules:
//!
//! - every method (top-level `methods`, and the `resources`' however deep) is an operation
//!   named from its `id` in the agents' charset (`drive.files.list` → `drive_files_list`),
//!   with the hints its HTTP method gives;
//! - the server is `rootUrl` joined with `servicePath`, as Google's clients join them; a
//!   method's `path` (never `flatPath`) is below it; `batchPath` is listed in the server's
//!   description and is no operation;
//! - `{+name}` is RFC 6570's reserved expansion: the path parameter is marked
//!   [`allow_reserved`](crate::operations::Parameter::allow_reserved), so a resource name
//!   (`projects/p/topics/t`) fills its segments with its `/` kept, and nothing beyond them;
//! - path and query parameters keep `required`, `enum` (their `enumDescriptions` appended to
//!   the description), `default`, `pattern` and `format`; a `repeated` one is a list sent as a
//!   key per value; they come in `parameterOrder` first;
//! - request and response schemas are the document's `schemas` by id; 64-bit integers stay
//!   strings as Google sends them; `annotations.required` makes the properties a method
//!   requires required in its body;
//! - of the global parameters only `fields` is a property; the others (`alt`, `key`,
//!   `access_token`, `oauth_token`, `callback`, `prettyPrint`, `quotaUser`, `userIp`,
//!   `uploadType`, `upload_protocol`, `$.xgafv`) are the client's;
//! - `auth.oauth2.scopes` is an OAuth 2.0 scheme (authorization code, Google's endpoints), and
//!   each of a method's `scopes` an alternative requirement (any one grants the method);
//! - a `mediaUpload` would be a tool `<method>_media` whose body is the media itself; the
//!   operations carry JSON and form bodies only, so it is [`Skipped`](crate::Skipped) at
//!   `…/mediaUpload` with [`SkipReason::BodyNotJson`] and the media types it accepts;
//!   `supportsMediaDownload` is said in the description.
//!
//! Every skip is located in the Discovery document (`#/resources/files/methods/list`), not in
//! the converted one.

mod convert;
mod schema;

use serde_json::Value;

use crate::operations::Location;
use crate::{NotOpenApi, ReadOperations, ReadOptions, SkipReason, reader};

/// The Discovery version read.
const VERSION: &str = "v1";

/// Whether `document` is a Discovery document (it has a `discoveryVersion`).
pub(crate) fn is_discovery(document: &Value) -> bool {
    document.get("discoveryVersion").is_some()
}

/// Reads the operations of a Discovery document.
///
/// # Errors
///
/// [`NotOpenApi`] when `discoveryVersion` is not `v1`, or the document is Google's directory of
/// APIs (`discovery#directoryList`) rather than one API's description.
pub(crate) fn read(document: &Value, options: &ReadOptions) -> Result<ReadOperations, NotOpenApi> {
    match document.get("discoveryVersion") {
        Some(Value::String(version)) if version == VERSION => {}
        Some(other) => {
            return Err(NotOpenApi::new(format!(
                "#/discoveryVersion: the Discovery version {other} is not {VERSION}, the one read here"
            )));
        }
        None => {
            return Err(NotOpenApi::new(
                "the document has no `discoveryVersion`: it is no Discovery document",
            ));
        }
    }
    if document.get("kind").and_then(Value::as_str) == Some("discovery#directoryList") {
        return Err(NotOpenApi::new(
            "#/kind: the document is Google's directory of APIs (discovery#directoryList), not one API's Discovery document",
        ));
    }
    let converted = convert::convert(document);
    let mut read = reader::read_openapi(&converted.openapi, options)?;
    for operation in &mut read.operations {
        if let Some(names) = converted.reserved.get(operation.name()) {
            for parameter in &mut operation.request.parameters {
                if parameter.location == Location::Path && names.contains(&parameter.name) {
                    parameter.allow_reserved = true;
                }
            }
        }
    }
    for skipped in &mut read.skipped {
        if let Some(place) = converted.places.get(&skipped.location) {
            skipped.location = place.location.clone();
            skipped.path = place.path.clone();
        }
        if let SkipReason::DuplicateName { taken_by, .. } = &mut skipped.reason
            && let Some(place) = converted.places.get(taken_by.as_str())
        {
            *taken_by = place.location.clone();
        }
    }
    read.skipped.extend(converted.skipped);
    Ok(read)
}

#[cfg(test)]
mod tests;
