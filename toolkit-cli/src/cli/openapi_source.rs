//! `--openapi DOC --base-url URL [--header 'K: V']... [--credential SCHEME=VAR]...`: the HTTP
//! source of an OpenAPI document's operations ([`SourceOf`], [`http_source`]), which `call` and
//! `execute` run.
//!
//! The document is read as the generator reads it ([`toolkit_gen::builder::read_openapi`], the
//! runtime's own reader), so what a script sees is what a host gets.

use std::path::Path;
use std::time::Duration;

use toolkit_runtime::http::{HeaderClient, HttpSource, client_builder};

/// What an HTTP source of a document's operations is made of (`call` and `execute`).
#[derive(Debug)]
pub struct SourceOf<'a> {
    /// The document.
    pub file: &'a Path,
    /// Where requests go.
    pub base_url: &'a str,
    /// `Name: value` headers sent last on every request.
    pub headers: &'a [String],
    /// `SCHEME=VAR` credentials (see [`credentials`](super::credentials)).
    pub credentials: &'a [String],
    /// Origins besides the API's whose `tokenUrl` may receive a client secret.
    pub token_origins: &'a [String],
    /// How long an operation may take.
    pub timeout: Duration,
}

/// The source of the document's operations, sent to the base URL with the headers, each
/// operation carrying the credentials its security requirements name.
///
/// # Errors
///
/// A message for people when the document cannot be read, or an argument is wrong.
pub fn http_source(of: &SourceOf<'_>) -> Result<HttpSource, String> {
    http_source_of(of, None).map(|(source, _)| source)
}

/// As [`http_source`], with `only` the operation of that name when given (none when the
/// document has no such operation): the document is read with its schemas held once, and only
/// the operations kept get copies of the entries they reach, so running one operation of a
/// large document costs that operation, not the document's operations times its schemas.
///
/// With `only`, also what to tell a person when that operation needs a credential that none of
/// the `--credential`s gives ([`credential_hint`](super::credentials::credential_hint)).
///
/// # Errors
///
/// As [`http_source`].
pub fn http_source_of(
    of: &SourceOf<'_>,
    only: Option<&str>,
) -> Result<(HttpSource, Option<String>), String> {
    let mut read =
        toolkit_gen::builder::read_openapi(of.file).map_err(|error| error.to_string())?;
    if let Some(only) = only {
        read.operations.retain(|operation| operation.name() == only);
    }
    read.operations = toolkit_runtime::http::standing_alone(read.operations, &read.defs)
        .map_err(|error| format!("{}: {error}", of.file.display()))?;
    let hint = only.and_then(|only| {
        let wanted = read.security.requirements.get(only)?;
        super::credentials::credential_hint(only, wanted, of.credentials)
    });
    let credentials = super::credentials::credentials(
        of.credentials,
        of.token_origins,
        &read.security.schemes,
        of.base_url,
    )?;
    let client = client_builder()
        .build()
        .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
    let headers = super::headers::headers(of.headers)?;
    HttpSource::builder("api", of.base_url, HeaderClient::new(client, headers))
        .operations(read.operations)
        .security(
            read.security.schemes,
            read.security.requirements,
            credentials,
        )
        .timeout(of.timeout)
        .build()
        .map(|source| (source, hint))
        .map_err(|error| error.to_string())
}
