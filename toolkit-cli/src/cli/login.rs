//! OAuth for MCP servers on the command line: `toolkit-gen login`, and the authorization that
//! every `--mcp-url` command runs when the server asks for one (the MCP authorization
//! specification, through `toolkit_runtime::auth::OAuthClient`).
//!
//! - `toolkit-gen login --mcp-url URL [--client-id ID [--client-secret-env VAR] [--issuer
//!   URL]] [--client-metadata-url URL]` authorizes ahead of time and keeps the tokens in the token store; `--logout` forgets them.
//! - The user is sent to the authorization URL by printing it on stderr, and by running
//!   `$BROWSER URL` when `BROWSER` names a program (split as a shell would, run without one).
//!   The redirect comes back to a listener on `127.0.0.1`.
//! - Tokens are kept in an owner-only file: `--token-store FILE`, else `$TOOLKIT_TOKEN_STORE`,
//!   else `toolkit-gen/tokens.json` in the user's configuration folder; or in Redis, for
//!   gateway replicas, when that names a `redis://` or `rediss://` URL.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use reqwest::Url;
use reqwest::header::HeaderMap;
use toolkit_runtime::auth::{
    AuthError, FileStore, LoopbackCallback, OAuthClient, RedisStore, RegisteredClient, Secret,
    TokenStore,
};
use toolkit_runtime::mcp::Mcp;
use toolkit_runtime::{ToolSource, http::client_builder};

/// How a command authorizes at an MCP server that asks for it.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct OAuthArgs {
    /// The file the tokens are kept in (owner-only); by default `toolkit-gen/tokens.json` in the
    /// user's configuration folder. A `redis://` or `rediss://` URL keeps them in Redis (the
    /// store gateway replicas share; give a URL with a password in `$TOOLKIT_TOKEN_STORE`, not
    /// on the command line).
    #[arg(long, value_name = "FILE", env = "TOOLKIT_TOKEN_STORE")]
    pub token_store: Option<PathBuf>,
    /// The id of a client registered ahead at the server's authorization server (without it,
    /// the client registers itself, when the server allows).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// The environment variable that holds that client's secret (a public client has none).
    #[arg(long, value_name = "VAR", requires = "client_id")]
    pub client_secret_env: Option<String>,
    /// The issuer of the authorization server that client is registered at: a server naming
    /// another gets neither its id nor its secret (without it, the issuer `login` recorded in
    /// the token store, else the first one).
    #[arg(long, value_name = "URL", requires = "client_id")]
    pub issuer: Option<String>,
    /// The URL of this client's Client ID Metadata Document (https, with a path): its client id
    /// at authorization servers that support such documents, in place of registering.
    #[arg(long, value_name = "URL")]
    pub client_metadata_url: Option<Url>,
    /// The port of 127.0.0.1 the authorization's redirect comes back to (0: one the system
    /// picks).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub callback_port: u16,
}

impl OAuthArgs {
    /// The token store's file: `--token-store`, `$TOOLKIT_TOKEN_STORE` or the default.
    ///
    /// # Errors
    ///
    /// A message for people when no configuration folder is known (no `HOME`).
    pub fn store_path(&self) -> Result<PathBuf, String> {
        if let Some(path) = &self.token_store {
            return Ok(path.clone());
        }
        dirs::config_dir()
            .map(|folder| folder.join("toolkit-gen").join("tokens.json"))
            .ok_or_else(|| "no configuration folder is known: give --token-store FILE".into())
    }

    /// The token store: Redis when `--token-store` is a Redis URL, else the file.
    fn store(&self) -> Result<std::sync::Arc<dyn TokenStore>, String> {
        if let Some(url) = self.redis_url() {
            let store = RedisStore::new(url).map_err(|error| error.to_string())?;
            return Ok(std::sync::Arc::new(store));
        }
        Ok(std::sync::Arc::new(FileStore::new(self.store_path()?)))
    }

    /// `--token-store` when it is a Redis URL.
    fn redis_url(&self) -> Option<&str> {
        self.token_store
            .as_deref()
            .and_then(|path| path.to_str())
            .filter(|text| text.starts_with("redis://") || text.starts_with("rediss://"))
    }

    /// The token store as a message names it: the file's path, or Redis's address (never the
    /// URL, which may hold a password).
    pub fn store_name(&self) -> Result<String, String> {
        if let Some(url) = self.redis_url() {
            let address = Url::parse(url)
                .ok()
                .and_then(|url| {
                    let host = url.host_str()?.to_owned();
                    Some(format!("{host}:{}", url.port().unwrap_or(6379)))
                })
                .unwrap_or_else(|| "?".into());
            return Ok(format!("Redis at {address}"));
        }
        Ok(self.store_path()?.display().to_string())
    }

    /// The HTTP client of the MCP server at `url` that authorizes as these arguments say,
    /// sending `headers` on every request.
    ///
    /// # Errors
    ///
    /// A message for people when the client cannot be made (no loopback port, a secret's
    /// variable unset, no HTTP client).
    pub async fn client(&self, url: &Url, headers: HeaderMap) -> Result<OAuthClient, String> {
        let callback = LoopbackCallback::bind(self.callback_port, send_user_to)
            .await
            .map_err(|error| error.to_string())?;
        let http = client_builder()
            .default_headers(headers)
            .build()
            .map_err(|error| format!("the HTTP client could not be built: {error}"))?;
        let mut builder = OAuthClient::builder(url.clone(), callback)
            .http(http)
            .shared_store(self.store()?)
            .client_name("toolkit-gen");
        if let Some(id) = &self.client_id {
            let secret = match &self.client_secret_env {
                Some(variable) => Some(Secret::new(std::env::var(variable).map_err(|_| {
                    format!("--client-secret-env names {variable}, which is not set")
                })?)),
                None => None,
            };
            builder = builder.pre_registered(RegisteredClient::new(id, secret));
        }
        if let Some(issuer) = &self.issuer {
            builder = builder.issuer(issuer.clone());
        }
        if let Some(document) = &self.client_metadata_url {
            builder = builder.client_metadata_document(document.clone());
        }
        builder.build().map_err(|error| error.to_string())
    }
}

/// Sends the user to the authorization URL: printed on stderr, and opened with `$BROWSER` when
/// that is set (the program started directly, never through a shell).
fn send_user_to(url: &Url) -> Result<(), AuthError> {
    eprintln!("toolkit-gen: to authorize, open this address in a browser:\n  {url}");
    let Some(browser) = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
    else {
        return Ok(());
    };
    let words = shlex::split(&browser).unwrap_or_default();
    let Some((program, args)) = words.split_first() else {
        eprintln!("toolkit-gen: BROWSER is not a command line; open the address by hand");
        return Ok(());
    };
    let started = std::process::Command::new(program)
        .args(args)
        .arg(url.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn();
    if started.is_err() {
        eprintln!(
            "toolkit-gen: BROWSER ({program}) could not be started; open the address by hand"
        );
    }
    Ok(())
}

/// The arguments of `toolkit-gen login`.
#[derive(Clone, Debug, clap::Args)]
pub struct LoginArgs {
    /// The URL of the Streamable HTTP MCP server to authorize at.
    #[arg(long = "mcp-url", value_name = "URL")]
    pub url: String,
    /// How to authorize, and where the tokens are kept.
    #[command(flatten)]
    pub oauth: OAuthArgs,
    /// Forgets the server's tokens instead.
    #[arg(long)]
    pub logout: bool,
}

/// Runs `toolkit-gen login`: authorizes at the server (its tokens kept in the store) and lists
/// its tools with them, or forgets them with `--logout`. Prints one line on stdout, never a
/// token; exits 1 when the authorization fails.
pub fn login(args: &LoginArgs) -> ExitCode {
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("no async runtime: {error}"))
        .and_then(|runtime| runtime.block_on(authorize(args)));
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("toolkit-gen: {problem}");
            ExitCode::FAILURE
        }
    }
}

async fn authorize(args: &LoginArgs) -> Result<String, String> {
    let url: Url = args
        .url
        .parse()
        .map_err(|error| format!("--mcp-url is no URL: {error}"))?;
    let store = args.oauth.store_name()?;
    let client = args.oauth.client(&url, HeaderMap::new()).await?;
    if args.logout {
        client.logout().await.map_err(|error| error.to_string())?;
        return Ok(format!(
            "logged out of {url}; its tokens are gone from {store}"
        ));
    }
    let grant = client.login().await.map_err(|error| error.to_string())?;
    // The tokens are used once, as any later command will: the server lists its tools.
    let source = Mcp::http("mcp", url.clone(), client);
    let listed = source.discover().await;
    source.close().await;
    let tools = listed.map_err(|error| {
        format!("authorized, but the server's tools could not be listed with the token: {error}")
    })?;
    Ok(format!(
        "authorized at {url} by {} ({} tools listed); the tokens are kept in {store}",
        grant.issuer,
        tools.len(),
    ))
}
