//! The client the official MCP conformance suite runs (`scripts/mcp-conformance-client`): it
//! uses the library as a host would — an `Mcp` source over Streamable HTTP, and for the `auth/*`
//! scenarios an `OAuthClient` with a headless authorization callback, for the elicitation one an
//! `Elicitation` callback that accepts the schema's defaults — and does what each scenario asks.
//!
//! The suite appends the server's URL as the last argument and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO` (with its data, for pre-registration, in
//! `MCP_CONFORMANCE_CONTEXT`). Exit 0 when the scenario's work is done, 1 when it failed, 2 for
//! an unknown scenario or past the time limit (25 s, under the suite's 30 s).

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolkit_runtime::auth::{
    AuthError, AuthorizationCallback, MachineCredentials, OAuthClient, RegisteredClient, Secret,
};
use toolkit_runtime::mcp::{Elicitation, ElicitationAnswer, ElicitationRequest, Mcp, McpOptions};
use toolkit_runtime::{BoxFuture, ToolSource, ToolSourceError};

/// The time limit of a run, under the suite's 30 s.
const TIME_LIMIT: Duration = Duration::from_secs(25);

/// The Client ID Metadata Document URL the suite's `auth/basic-cimd` expects (its AS never
/// fetches it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Follows the authorization URL without a browser: the suite's authorization endpoint answers
/// at once with a redirect to the redirect URI, whose `Location` is the redirect a browser would
/// have received. Only for an authorization server on loopback (the suite's).
struct Headless {
    http: reqwest::Client,
}

impl AuthorizationCallback for Headless {
    fn redirect_uri(&self) -> reqwest::Url {
        reqwest::Url::parse("http://127.0.0.1:3000/callback").unwrap_or_else(|_| unreachable!())
    }

    fn authorize(&self, url: reqwest::Url) -> BoxFuture<'_, Result<reqwest::Url, AuthError>> {
        Box::pin(async move {
            let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
            if !loopback {
                return Err(AuthError::Refused(
                    "the headless callback follows only authorization servers on loopback".into(),
                ));
            }
            let response = self.http.get(url.clone()).send().await.map_err(|_| {
                AuthError::Unavailable("the authorization endpoint could not be reached".into())
            })?;
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or_else(|| {
                    AuthError::Refused("the authorization endpoint did not redirect".into())
                })?;
            url.join(location)
                .map_err(|_| AuthError::Refused("the redirect is not a URL".into()))
        })
    }
}

fn context() -> Map<String, Value> {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|value| value.as_object().cloned())
        .unwrap_or_default()
}

fn options() -> McpOptions {
    McpOptions::default().timeout(Duration::from_secs(20))
}

/// Lists the tools and calls `tool` with `input`, as a host does; then ends the session.
async fn list_and_call(source: Mcp, tool: Option<(&str, Value)>) -> Result<(), ToolSourceError> {
    let tools = source.discover().await?;
    eprintln!("listed {} tools", tools.len());
    if let Some((name, input)) = tool {
        let input = input.as_object().cloned().unwrap_or_default();
        let answer = source
            .call(name, input, &toolkit_runtime::CallContext::new())
            .await?;
        eprintln!("{name} answered {answer}");
    }
    source.close().await;
    Ok(())
}

async fn run(scenario: &str, url: reqwest::Url) -> Result<ExitCode, String> {
    let plain = || {
        Mcp::http_with_options(
            "conformance",
            url.clone(),
            reqwest::Client::new(),
            options(),
        )
    };
    let done = match scenario {
        "initialize" => list_and_call(plain(), None).await,
        "tools_call" => {
            list_and_call(plain(), Some(("add_numbers", json!({"a": 2, "b": 3})))).await
        }
        "sse-retry" => list_and_call(plain(), Some(("test_reconnection", json!({})))).await,
        "elicitation-sep1034-client-defaults" => {
            // A host with nobody to ask: it accepts the form as its schema's defaults fill it.
            let options =
                options().elicitation(Elicitation::new(|request: ElicitationRequest| async move {
                    ElicitationAnswer::Accept(request.defaults())
                }));
            let source =
                Mcp::http_with_options("conformance", url.clone(), reqwest::Client::new(), options);
            list_and_call(
                source,
                Some(("test_client_elicitation_defaults", json!({}))),
            )
            .await
        }
        machine if machine.starts_with("auth/client-credentials") => {
            // The client credentials extension (SEP-1046): a client with no user, its secret or
            // its private key given in the scenario's context.
            let context = context();
            let text = |key: &str| context.get(key).and_then(Value::as_str).unwrap_or("");
            let credentials = if context.contains_key("private_key_pem") {
                MachineCredentials::private_key_jwt(
                    text("client_id"),
                    text("private_key_pem"),
                    text("signing_algorithm"),
                )
            } else {
                MachineCredentials::secret(text("client_id"), text("client_secret"))
            };
            let client = OAuthClient::machine(url.clone(), credentials)
                .build()
                .map_err(|error| error.to_string())?;
            let source = Mcp::http_with_options("conformance", url.clone(), client, options());
            list_and_call(source, Some(("test-tool", json!({})))).await
        }
        auth if auth.starts_with("auth/") => {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|error| error.to_string())?;
            let mut builder = OAuthClient::builder(url.clone(), Headless { http })
                .client_name("toolkit-conformance-client")
                .client_metadata_document(
                    reqwest::Url::parse(CLIENT_METADATA_URL).map_err(|e| e.to_string())?,
                );
            let context = context();
            if let Some(id) = context.get("client_id").and_then(Value::as_str) {
                let secret = context
                    .get("client_secret")
                    .and_then(Value::as_str)
                    .map(Secret::new);
                builder = builder.pre_registered(RegisteredClient::new(id, secret));
            }
            let client = builder.build().map_err(|error| error.to_string())?;
            let source = Mcp::http_with_options("conformance", url.clone(), client, options());
            list_and_call(source, Some(("test-tool", json!({})))).await
        }
        other => {
            eprintln!("unknown scenario {other:?}");
            return Ok(ExitCode::from(2));
        }
    };
    match done {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => {
            eprintln!("{}: {:?}", error.source, error.reason);
            Ok(ExitCode::FAILURE)
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("toolkit_runtime=debug")),
        )
        .init();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args()
        .next_back()
        .and_then(|last| reqwest::Url::parse(&last).ok())
    else {
        eprintln!("usage: mcp-conformance-client <server URL> (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("no runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        match tokio::time::timeout(TIME_LIMIT, run(&scenario, url)).await {
            Ok(Ok(code)) => code,
            Ok(Err(error)) => {
                eprintln!("{error}");
                ExitCode::FAILURE
            }
            Err(_) => {
                eprintln!("scenario {scenario:?} not done within {TIME_LIMIT:?}");
                ExitCode::from(2)
            }
        }
    })
}
