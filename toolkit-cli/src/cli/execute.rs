//! `toolkit-gen execute`: model-style code run in the isolate that ships, against the tools of a
//! source given on the command line (an OpenAPI document's operations or an MCP server's tools;
//! none given: no tools).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolkit_runtime::{
    ToolSource, Toolkit, ToolkitOptions, code::CodeMode, code::CodeModeOptions, code::QuickJs,
};

use super::login::OAuthArgs;
use super::mcp::McpServer;
use super::openapi::{SourceOf, http_source};

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
        super::graphql::source(
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

/// Runs `code` (a file, or standard input for `-`) against `source`'s tools within `timeout`,
/// printing `{result, logs}` and exiting 0, or the failure JSON and exiting 1.
pub fn execute(source: &SourceArgs, code: &str, timeout: Duration) -> ExitCode {
    let mut text = String::new();
    let read = if code == "-" {
        std::io::stdin().read_to_string(&mut text).map(drop)
    } else {
        std::fs::read_to_string(code).map(|code| text = code)
    };
    if let Err(error) = read {
        eprintln!("toolkit-gen: cannot read the code from {code}: {error}");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("toolkit-gen: cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let presented = source.toolkit(timeout).await?;
        let options = CodeModeOptions::default().timeout(timeout);
        let toolkit = CodeMode::toolkit(&presented, Arc::new(QuickJs::default()), &options);
        Ok::<_, String>(toolkit.call("execute", json!({ "code": text })).await)
    });
    let mut out = std::io::stdout().lock();
    match outcome {
        Err(problem) => {
            eprintln!("toolkit-gen: {problem}");
            ExitCode::FAILURE
        }
        Ok(Ok(run)) => {
            let _ = writeln!(out, "{run}");
            ExitCode::SUCCESS
        }
        Ok(Err(failure)) => {
            let _ = writeln!(out, "{}", failure.to_json());
            ExitCode::FAILURE
        }
    }
}
