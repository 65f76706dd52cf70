//! `--mcp-url URL [--header 'K: V']... | --mcp-stdio 'CMD ARGS'`: the arguments that name an MCP
//! server ([`McpServer`]), which `snapshot` takes, and `call` and `execute` make of theirs.

use toolkit_runtime::mcp::{Mcp, StdioCommand};

use super::headers::headers;
use super::login::OAuthArgs;

/// Which MCP server to reach: a URL (with the headers its credentials need), or a command that
/// starts a stdio server.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct McpServer {
    /// The URL of a Streamable HTTP (or old HTTP+SSE) MCP server.
    #[arg(long = "mcp-url", value_name = "URL", conflicts_with = "stdio")]
    pub url: Option<String>,
    /// A header sent with every request to the URL, as 'Name: value' (repeatable): where a
    /// credential goes.
    #[arg(long = "header", value_name = "'K: V'")]
    pub headers: Vec<String>,
    /// The command that starts a stdio MCP server, as one string, split as a shell would
    /// ('npx -y @modelcontextprotocol/server-everything stdio').
    #[arg(long = "mcp-stdio", value_name = "CMD")]
    pub stdio: Option<String>,
    /// How to authorize at a URL that asks for it (unless `--header` gives an
    /// `Authorization`).
    #[command(flatten)]
    pub oauth: OAuthArgs,
}

impl McpServer {
    /// The source of the server these arguments name. A URL's requests are authorized with
    /// OAuth when the server asks (see [`OAuthArgs`]), unless `--header` gives an
    /// `Authorization` of its own.
    ///
    /// # Errors
    ///
    /// A message for people when the arguments name no server, or name one badly.
    pub async fn source(&self) -> Result<Mcp, String> {
        match (&self.url, &self.stdio) {
            (Some(url), None) => {
                let url = url
                    .parse()
                    .map_err(|error| format!("--mcp-url is no URL: {error}"))?;
                let headers = headers(&self.headers)?;
                if headers.contains_key(reqwest::header::AUTHORIZATION) {
                    // Redirects only within the server's origin: a header never follows one
                    // elsewhere.
                    let client = toolkit_runtime::http::client_builder()
                        .default_headers(headers)
                        .build()
                        .map_err(|error| format!("the HTTP client could not be built: {error}"))?;
                    return Ok(Mcp::http("mcp", url, client));
                }
                Ok(Mcp::http("mcp", url.clone(), self.oauth.client(&url, headers).await?))
            }
            (None, Some(_)) if !self.headers.is_empty() => {
                Err("--header goes with --mcp-url; a stdio server takes its credentials from its environment".into())
            }
            (None, Some(command)) => {
                let words = shlex::split(command)
                    .ok_or("--mcp-stdio is not a command line (an unclosed quote?)")?;
                let (program, args) = words.split_first().ok_or("--mcp-stdio is empty")?;
                Ok(Mcp::stdio("mcp", StdioCommand::new(program).args(args)))
            }
            _ => Err("name one server: --mcp-url URL or --mcp-stdio 'CMD'".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use futures_util::FutureExt as _;

    use super::*;

    #[test]
    fn bad_arguments_are_told() {
        assert!(
            McpServer::default()
                .source()
                .now_or_never()
                .unwrap()
                .is_err()
        );
        let unclosed = McpServer {
            stdio: Some("node 'x".into()),
            ..McpServer::default()
        };
        assert!(unclosed.source().now_or_never().unwrap().is_err());
    }
}
