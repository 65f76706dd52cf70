//! `--graphql SCHEMA [--operations FILE]...`: a GraphQL schema (SDL or introspection JSON, or an
//! endpoint's URL whose schema is introspected) read into tools by `toolkit-graphql`, one per
//! root field (or, with `--operations FILE`, one per named operation of the files): the tools
//! `report` lists ([`read`]), and the source `call` and `execute` run them with ([`source`]),
//! the runtime's HTTP source with their `selection`s checked against the schema first.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toolkit_graphql::{
    GraphqlSchema, MAX_SCHEMA_LENGTH, OperationDocument, ReadOptions, ReadTools,
    read_operation_documents, read_schema_tools,
};
use toolkit_runtime::ToolSource;
use toolkit_runtime::graphql::{GraphqlSource, introspect};
use toolkit_runtime::http::{DEFAULT_TIMEOUT, HeaderClient, client_builder};

/// The URL `schema` is, when it is one (`http://` or `https://`): the endpoint whose own schema
/// is introspected.
fn schema_url(schema: &Path) -> Option<&str> {
    schema
        .to_str()
        .filter(|text| text.starts_with("http://") || text.starts_with("https://"))
}

/// The schema at `schema`: a file (SDL or introspection JSON), or the endpoint at that URL
/// introspected with `headers` on the request.
fn schema(schema: &Path, headers: &[String], timeout: Duration) -> Result<GraphqlSchema, String> {
    let Some(url) = schema_url(schema) else {
        let text = std::fs::read_to_string(schema)
            .map_err(|error| format!("cannot read {}: {error}", schema.display()))?;
        return GraphqlSchema::read(&text, &schema.display().to_string())
            .map_err(|error| error.to_string());
    };
    let client = HeaderClient::new(
        client_builder()
            .build()
            .map_err(|error| format!("cannot build an HTTP client: {error}"))?,
        super::headers::headers(headers)?,
    );
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start a runtime: {error}"))?
        .block_on(introspect(&client, url, MAX_SCHEMA_LENGTH, timeout))
        .map_err(|reason| reason.description().to_owned())
}

/// The operation documents of `files`.
fn documents(files: &[PathBuf]) -> Result<Vec<OperationDocument>, String> {
    files
        .iter()
        .map(|file| {
            std::fs::read_to_string(file)
                .map(|text| OperationDocument::new(file.display().to_string(), text))
                .map_err(|error| format!("cannot read {}: {error}", file.display()))
        })
        .collect()
}

/// The tools of the schema at `schema` (a file, or an endpoint's URL introspected with
/// `headers`): of its root fields, or of the named operations of `operations` when any are
/// given.
///
/// # Errors
///
/// A message for people: a file that cannot be read, an endpoint that cannot be introspected, a
/// schema that does not validate (each problem at its file, line and column).
pub fn read(
    schema: &Path,
    operations: &[PathBuf],
    headers: &[String],
) -> Result<(GraphqlSchema, ReadTools), String> {
    let schema = self::schema(schema, headers, DEFAULT_TIMEOUT)?;
    let options = ReadOptions::default();
    if operations.is_empty() {
        let read = read_schema_tools(&schema, &options);
        return Ok((schema, read));
    }
    let read = read_operation_documents(&schema, &documents(operations)?, &options);
    Ok((schema, read))
}

/// The source of a schema's tools (a file, or an endpoint's URL introspected at the first
/// listing): the runtime's GraphQL source sending to `endpoint` (the schema's URL when not
/// given), with `headers` on every request, its selections checked against the schema first.
///
/// # Errors
///
/// A message for people when the schema cannot be read or an argument is wrong.
pub fn source(
    schema: &Path,
    operations: &[PathBuf],
    endpoint: Option<&str>,
    headers: &[String],
    timeout: Duration,
) -> Result<Arc<dyn ToolSource>, String> {
    let url = schema_url(schema);
    let endpoint = match (endpoint, url) {
        (Some(endpoint), Some(url)) if endpoint != url => {
            return Err(format!(
                "--endpoint {endpoint} is not the introspected {url}: give a schema file to send \
                 elsewhere"
            ));
        }
        (Some(endpoint), _) | (None, Some(endpoint)) => endpoint,
        (None, None) => return Err("--endpoint URL is needed beside a schema file".to_owned()),
    };
    let client = client_builder()
        .build()
        .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
    let client = HeaderClient::new(client, super::headers::headers(headers)?);
    let mut source = GraphqlSource::builder("api", endpoint, client)
        .documents(documents(operations)?)
        .timeout(timeout);
    if url.is_none() {
        source = source.schema(self::schema(schema, headers, timeout)?);
    }
    let source = source.build().map_err(|error| error.to_string())?;
    Ok(Arc::new(source))
}
