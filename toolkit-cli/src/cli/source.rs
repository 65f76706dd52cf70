//! `--openapi DOC --base-url URL | --graphql SCHEMA [--endpoint URL] | --mcp-url URL | --mcp-stdio
//! 'CMD'`: the source of the tools `call` and `execute` reach ([`SourceArgs`]) — an OpenAPI
//! document's operations, a GraphQL schema's fields or an MCP server's tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use toolkit_runtime::{ToolSource, Toolkit, ToolkitOptions};

use super::login::OAuthArgs;
use super::mcp_server::McpServer;
use super::openapi_source::{SourceOf, http_source};

/// Which tools a command reaches: an OpenAPI document's operations sent to a base URL, or an MCP
/// server's tools.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SourceArgs {
    /// An OpenAPI (3.x or Swagger 2.0) document whose operations are the tools, or a Google
    /// Discovery document's methods (`--discovery DOC`, an alias: the kind is read from the
    /// content).
    #[arg(
        long,
        visible_alias = "discovery",
        requires = "base_url",
        conflicts_with_all = ["mcp_url", "mcp_stdio", "graphql"]
    )]
    pub openapi: Option<PathBuf>,
    /// A GraphQL schema (SDL, or an introspection result as JSON) whose root query and mutation
    /// fields are the tools, sent to `--endpoint`; or an endpoint's `https://` URL, whose schema
    /// is introspected and to which the requests go.
    #[arg(long, value_name = "SCHEMA", conflicts_with_all = ["mcp_url", "mcp_stdio"])]
    pub graphql: Option<PathBuf>,
    /// With `--graphql`: `.graphql` files (or persisted-query manifests) whose named operations
    /// are the tools instead (repeatable).
    #[arg(long, value_name = "FILE", requires = "graphql")]
    pub operations: Vec<PathBuf>,
    /// With `--graphql`: the GraphQL endpoint, such as `https://api.github.com/graphql`.
    #[arg(long, value_name = "URL", requires = "graphql")]
    pub endpoint: Option<String>,
    /// Where the document's requests go, such as `https://api.example.com/v1`.
    #[arg(long, requires = "openapi")]
    pub base_url: Option<String>,
    /// The URL of a Streamable HTTP (or old HTTP+SSE) MCP server.
    #[arg(long = "mcp-url", value_name = "URL", conflicts_with = "mcp_stdio")]
    pub mcp_url: Option<String>,
    /// The command that starts a stdio MCP server, split as a shell would.
    #[arg(long = "mcp-stdio", value_name = "CMD")]
    pub mcp_stdio: Option<String>,
    /// A header sent on every request, as `Name: value` (repeatable); for credentials.
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// The credential of an OpenAPI document's security scheme, as `SCHEME=VAR`: the value is
    /// read from the environment variable `VAR` (repeatable; `report` lists the document's
    /// schemes under `securitySchemes`).
    #[arg(long = "credential", value_name = "SCHEME=VAR", requires = "openapi")]
    pub credentials: Vec<String>,
    /// An origin other than the API's (`https://auth.example.com`) whose OAuth 2 `tokenUrl` may
    /// receive a `--credential`'s client secret (repeatable): without, a document naming a
    /// `tokenUrl` elsewhere is refused.
    #[arg(long = "token-origin", value_name = "ORIGIN", requires = "openapi")]
    pub token_origins: Vec<String>,
    /// How to authorize at an MCP server that asks for it.
    #[command(flatten)]
    pub oauth: OAuthArgs,
}

impl SourceArgs {
    /// The MCP server these arguments name, if they name one.
    pub fn mcp_server(&self) -> McpServer {
        McpServer {
            url: self.mcp_url.clone(),
            headers: self.headers.clone(),
            stdio: self.mcp_stdio.clone(),
            oauth: self.oauth.clone(),
        }
    }

    /// The OpenAPI document these arguments name, with where its requests go and with what
    /// (`None` without `--openapi`).
    pub fn document(&self, timeout: Duration) -> Option<SourceOf<'_>> {
        self.openapi.as_deref().map(|file| SourceOf {
            file,
            base_url: self.base_url.as_deref().unwrap_or_default(),
            headers: &self.headers,
            credentials: &self.credentials,
            token_origins: &self.token_origins,
            timeout,
        })
    }

    /// The source of the GraphQL schema these arguments name (`--graphql SCHEMA --endpoint URL`).
    ///
    /// # Errors
    ///
    /// A message for people when there is none, or it cannot be read.
    pub fn graphql_source(&self, timeout: Duration) -> Result<Arc<dyn ToolSource>, String> {
        let schema = self.graphql.as_deref().ok_or("no --graphql schema given")?;
        super::graphql_schema::source(
            schema,
            &self.operations,
            self.endpoint.as_deref(),
            &self.headers,
            timeout,
        )
    }

    /// The toolkit of the tools these arguments reach (empty when they name none). An MCP
    /// server is asked for its tools; a document is read.
    ///
    /// # Errors
    ///
    /// A message for people when the source cannot be made or listed.
    pub async fn toolkit(&self, timeout: Duration) -> Result<Toolkit, String> {
        let source: Arc<dyn ToolSource> = if self.graphql.is_some() {
            self.graphql_source(timeout)?
        } else if let Some(document) = self.document(timeout) {
            Arc::new(http_source(&document)?)
        } else if self.mcp_url.is_some() || self.mcp_stdio.is_some() {
            Arc::new(self.mcp_server().source().await?)
        } else {
            return Ok(Toolkit::default());
        };
        let definitions = source
            .discover()
            .await
            .map_err(|error| format!("the tools cannot be listed: {error}"))?;
        Toolkit::from_source(source, definitions, &ToolkitOptions::default())
            .map_err(|e| e.to_string())
    }
}
