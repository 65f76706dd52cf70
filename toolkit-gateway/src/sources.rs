//! The sources a configuration names, made: an OpenAPI document's operations over an HTTP
//! client, an MCP server over HTTP or started as a child process. Credentials come from the
//! environment here, and only here.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use toolkit_auth::{
    AuthError, AuthorizationCallback, ClientCredentials, MachineCredentials, OAuthClient,
    OAuthOptions, RegisteredClient, Secret, TokenStore,
};
use toolkit_core::context::Clients;
use toolkit_core::{BoxFuture, ToolSource};
use toolkit_http::{Credentials, HeaderClient, HttpSource, client_builder};
use toolkit_mcp::{ListLifetimeHandle, Mcp, McpOptions, StdioCommand, ToolsChanged};
use toolkit_runtime::resilience::{Failover, Resilient};

use super::config::{ConfigError, SourceConfig, SourceKind, SourceOAuth, read_env};
use super::grant_store::open_store;
use super::oauth_connect::{ConnectCallback, Connected, Connects, Login, STORE_KEY};
use super::on_behalf::OnBehalf;
use super::per_person::{Credential, Make, PerPerson};
use super::person_secrets::{PersonSecrets, RedisSecrets, SealingKey};

/// The host's variables a stdio server gets besides those its `env` names: what programs need to
/// be found and run, and no credential.
const PASSED_ON: [&str; 9] = [
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
];

/// A source made, with what tells when its tools changed (an MCP server's
/// `notifications/tools/list_changed`, where its transport hears it).
pub struct BuiltSource {
    /// The source.
    pub source: Arc<dyn ToolSource>,
    /// Wakes when the source says its tools changed.
    pub changes: Option<ToolsChanged>,
    /// Where an MCP source keeps how long its last listing stays fresh (`ttlMs`).
    pub lifetime: Option<ListLifetimeHandle>,
    /// The source as an MCP server, whose resources and prompts the gateway serves too.
    pub mcp: Option<Arc<Mcp>>,
    /// The source's resilience layers, when it wears some (`source` is they).
    pub resilient: Option<Arc<Resilient>>,
}

impl std::fmt::Debug for BuiltSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltSource")
            .field("source", &self.source.name())
            .field("changes", &self.changes.is_some())
            .field("lifetime", &self.lifetime.is_some())
            .finish()
    }
}

/// The source `config` describes, over each of its endpoints (`failover`) and wearing its
/// resilience layers, with what tells when its tools changed; see [`endpoint`].
///
/// # Errors
///
/// As [`endpoint`], and layers the runtime refuses.
pub fn made(
    config: &SourceConfig,
    clients: &Arc<Clients>,
    connects: Option<&Arc<Connects>>,
) -> Result<BuiltSource, ConfigError> {
    let mut made = endpoint(config, clients, connects)?;
    let name = config.name.as_str();
    if !config.failover.is_empty() {
        let mut endpoints = vec![Arc::clone(&made.source)];
        for other in &config.failover {
            let mut alternate = config.clone();
            if alternate.url.is_some() {
                alternate.url = Some(other.clone());
            } else {
                alternate.base_url = Some(other.clone());
            }
            endpoints.push(endpoint(&alternate, clients, connects)?.source);
        }
        let mut failover = Failover::new(endpoints)
            .ok_or_else(|| ConfigError(format!("source {name:?}: no endpoint")))?;
        if let Some(ejected_for) = config.resilience.as_ref().and_then(|r| r.ejected_for()) {
            failover = failover.ejected_for(ejected_for);
        }
        made.source = Arc::new(failover);
    }
    if let Some(resilience) = &config.resilience {
        let layers = resilience
            .layers(config.timeout())
            .map_err(|problems| ConfigError(format!("source {name:?}: {}", problems.join("; "))))?;
        let resilient = Resilient::new(Arc::clone(&made.source), layers).map_err(|problems| {
            let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
            ConfigError(format!("source {name:?}: {}", problems.join("; ")))
        })?;
        let resilient = Arc::new(resilient);
        made.source = Arc::clone(&resilient) as Arc<dyn ToolSource>;
        made.resilient = Some(resilient);
    }
    Ok(made)
}

/// The source `config` describes at its `url` or `base_url`, with what tells when its tools
/// changed; an MCP source asks
/// what its server asks outside any served call (`roots/list`) of the one client of `clients`,
/// the gateway's sessions, when there is one. A source whose people connect their own accounts
/// (`oauth.per_person`) sends them to the pages of `connects`.
///
/// # Errors
///
/// A message naming the source: an unset variable, an unreadable document, a bad URL.
fn endpoint(
    config: &SourceConfig,
    clients: &Arc<Clients>,
    connects: Option<&Arc<Connects>>,
) -> Result<BuiltSource, ConfigError> {
    let plain = |source: Arc<dyn ToolSource>| BuiltSource {
        source,
        changes: None,
        lifetime: None,
        mcp: None,
        resilient: None,
    };
    let mcp = |source: Mcp| {
        let changes = source.tools_changed();
        let lifetime = Some(source.list_lifetime_handle());
        let source = Arc::new(source);
        BuiltSource {
            changes,
            lifetime,
            source: Arc::clone(&source) as Arc<dyn ToolSource>,
            mcp: Some(source),
            resilient: None,
        }
    };
    let name = config.name.as_str();
    let fail = |problem: String| ConfigError(format!("source {name:?}: {problem}"));
    let timeout = config.timeout();
    match config.kind().map_err(ConfigError)? {
        SourceKind::OpenApi { document, base_url } => {
            let read = read_openapi(&document, config.output_schema).map_err(fail)?;
            for skipped in &read.skipped {
                tracing::warn!(
                    source = name,
                    "{} {} ({}) is not served: {}",
                    skipped.method,
                    skipped.path,
                    skipped.location,
                    skipped.reason
                );
            }
            warn_of_missing_credentials(config, &read.security.requirements);
            let client = client_builder()
                .build()
                .map_err(|error| fail(format!("cannot build an HTTP client: {error}")))?;
            let mut own = Vec::new();
            for (scheme, variable) in &config.credentials {
                own.push((scheme.clone(), read_env(name, variable)?));
            }
            let http = HeaderClient::new(client, headers(config)?);
            let shared = http_source(config, &read, &base_url, &http, &own).map_err(fail)?;
            let Some((credential, fallback)) = personal(config, true)? else {
                return Ok(plain(shared));
            };
            let config = config.clone();
            let make: Make = Box::new(move |entry| {
                let texts: Vec<(String, String)> = entry
                    .iter()
                    .map(|(scheme, text)| (scheme.clone(), text.clone()))
                    .collect();
                http_source(&config, &read, &base_url, &http, &texts)
            });
            Ok(plain(Arc::new(PerPerson::new(
                shared, fallback, credential, make,
            ))))
        }
        SourceKind::Graphql {
            endpoint,
            schema,
            operations,
        } => {
            let client = client_builder()
                .build()
                .map_err(|error| fail(format!("cannot build an HTTP client: {error}")))?;
            let http = HeaderClient::new(client, headers(config)?);
            graphql_source(
                name,
                schema.as_deref(),
                &operations,
                &endpoint,
                http,
                timeout,
            )
            .map(plain)
            .map_err(fail)
        }
        SourceKind::McpUrl(url) => {
            let url: reqwest::Url = url
                .parse()
                .map_err(|error| fail(format!("`url` is no URL: {error}")))?;
            let client = client_builder()
                .default_headers(headers(config)?)
                .build()
                .map_err(|error| fail(format!("cannot build an HTTP client: {error}")))?;
            // What the server asks while a served call runs goes to the client of that call.
            let options = McpOptions::default()
                .timeout(timeout)
                .max_call_time(max_call_time(config))
                .relay(true)
                .clients(Arc::clone(clients));
            let people = personal(config, false)?;
            let mut made = match &config.oauth {
                None => mcp(Mcp::http_with_options(
                    name,
                    url.clone(),
                    client,
                    options.clone(),
                )),
                Some(oauth) => {
                    let client = oauth_client(name, &url, client, oauth)?;
                    mcp(Mcp::http_with_options(
                        name,
                        url.clone(),
                        client,
                        options.clone(),
                    ))
                }
            };
            if let Some((credential, fallback)) = people {
                // Each person's calls go over a connection of their own, with their headers; the
                // tools, resources and prompts are listed over the source's own.
                let (own, name) = (headers(config)?, name.to_owned());
                let (url, options) = (url.clone(), options.clone());
                let make: Make = Box::new(move |entry| {
                    let mut headers = own.clone();
                    for (header, value) in entry {
                        let header = HeaderName::from_bytes(header.as_bytes())
                            .map_err(|_| format!("{header:?} is no header name"))?;
                        let mut value = HeaderValue::from_str(value)
                            .map_err(|_| format!("header {header} cannot carry its value"))?;
                        value.set_sensitive(true);
                        headers.insert(header, value);
                    }
                    let client = client_builder()
                        .default_headers(headers)
                        .build()
                        .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
                    let source =
                        Mcp::http_with_options(&name, url.clone(), client, options.clone());
                    Ok(Arc::new(source) as Arc<dyn ToolSource>)
                });
                made.source = Arc::new(PerPerson::new(made.source, fallback, credential, make));
            }
            if let Some(oauth) = config.oauth.as_ref().filter(|oauth| oauth.per_person) {
                let connects = connects.ok_or_else(|| {
                    fail("`oauth.per_person` needs the gateway served over HTTP".to_owned())
                })?;
                made.source = connected(config, oauth, &url, made.source, connects, &options)?;
            }
            Ok(made)
        }
        SourceKind::McpCommand(_)
            if config.per_person.is_some() || config.on_behalf_of.is_some() =>
        {
            Err(fail(
                "`per_person` and `on_behalf_of` need an OpenAPI source or an MCP server over \
                 HTTP: a stdio server takes its credentials from its environment, once"
                    .to_owned(),
            ))
        }
        SourceKind::McpCommand(words) => {
            let (program, args) = words
                .split_first()
                .ok_or_else(|| fail("`command` is empty".to_owned()))?;
            let mut command = StdioCommand::new(program).args(args).env_clear();
            for variable in PASSED_ON {
                if let Some(value) = std::env::var_os(variable) {
                    command = command.env(variable, value);
                }
            }
            for (variable, host_variable) in &config.env {
                command = command.env(variable, read_env(name, host_variable)?);
            }
            // What the server asks while a served call runs goes to the client of that call.
            let options = McpOptions::default()
                .timeout(timeout)
                .max_call_time(max_call_time(config))
                .relay(true)
                .clients(Arc::clone(clients));
            Ok(mcp(Mcp::stdio_with_options(name, command, options)))
        }
    }
}

/// The HTTP source of an OpenAPI document's operations `read`, its calls carrying `texts`
/// (`(scheme, credential)`: the source's own, or a person's).
fn http_source(
    config: &SourceConfig,
    read: &toolkit_openapi::ReadOperations,
    base_url: &str,
    http: &HeaderClient,
    texts: &[(String, String)],
) -> Result<Arc<dyn ToolSource>, String> {
    let mut credentials =
        Credentials::new().with_client_credentials_flow(ClientCredentials::flow());
    for origin in &config.token_origins {
        credentials = credentials.allow_token_origin(origin.clone());
    }
    for (scheme, text) in texts {
        credentials = credentials
            .with_text(&read.security.schemes, scheme, text, base_url)
            .map_err(|error| format!("the credential of scheme {scheme}: {error}"))?;
    }
    let source = HttpSource::builder(&config.name, base_url, http.clone())
        .operations(read.operations.clone())
        .security(
            read.security.schemes.clone(),
            read.security.requirements.clone(),
            credentials,
        )
        .timeout(config.timeout())
        .build()
        .map_err(|error| error.to_string())?;
    Ok(Arc::new(source))
}

/// Where each person's credential for a source with `per_person` or `on_behalf_of` comes from
/// (an OpenAPI source's, when `openapi`: a token goes to the scheme `on_behalf_of.scheme` names;
/// else an MCP server's, a token going in `Authorization`), and whether a person without one
/// falls back to the source's own.
fn personal(
    config: &SourceConfig,
    openapi: bool,
) -> Result<Option<(Credential, bool)>, ConfigError> {
    let fail = |problem: String| ConfigError(format!("source {:?}: {problem}", config.name));
    match (&config.per_person, &config.on_behalf_of) {
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(fail(
            "`per_person` and `on_behalf_of` are two ways to one credential: give one".to_owned(),
        )),
        (Some(per_person), None) => {
            let key = SealingKey::from_base64(&read_env(&config.name, &per_person.key_env)?)
                .map_err(|problem| {
                    fail(format!(
                        "per_person.key_env {}: {problem}",
                        per_person.key_env
                    ))
                })?;
            let secrets = PersonSecrets::open(&per_person.secrets, key).map_err(fail)?;
            if let PersonSecrets::Redis(redis) = &secrets {
                checked(redis).map_err(fail)?;
            }
            Ok(Some((
                Credential::Kept(Arc::new(secrets)),
                per_person.shared_fallback,
            )))
        }
        (None, Some(on_behalf)) => {
            let (name, prefix) = match (&on_behalf.scheme, openapi) {
                (Some(scheme), true) => (scheme.clone(), ""),
                (None, true) => {
                    return Err(fail(
                        "on_behalf_of.scheme names the security scheme the token is for".to_owned(),
                    ));
                }
                (_, false) => ("authorization".to_owned(), "Bearer "),
            };
            let on_behalf = OnBehalf::new(&config.name, on_behalf).map_err(fail)?;
            Ok(Some((
                Credential::OnBehalf {
                    on_behalf: Box::new(on_behalf),
                    name,
                    prefix,
                },
                false,
            )))
        }
    }
}

/// Whether the Redis store of people's credentials can be read now: asked at the start, on a
/// thread of its own (the start may run on the runtime it would otherwise wait on), so that a
/// store that cannot be read stops the gateway rather than failing each person's calls.
fn checked(redis: &RedisSecrets) -> Result<(), String> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| format!("cannot start a runtime: {error}"))?
                    .block_on(redis.check())
            })
            .join()
            .unwrap_or_else(|_| Err("the check of the Redis secrets store failed".to_owned()))
    })
}

/// The OAuth client of an MCP server: with client credentials, one that gets its own tokens;
/// else one that sends and refreshes the tokens `toolkit-gen login` kept in the token store,
/// and never starts an authorization (a gateway has no user to send to an authorization page;
/// `max_authorizations` 0 makes the 401 the answer).
fn oauth_client(
    name: &str,
    url: &reqwest::Url,
    http: reqwest::Client,
    oauth: &SourceOAuth,
) -> Result<OAuthClient, ConfigError> {
    let secret = |variable: &Option<String>| {
        variable
            .as_deref()
            .map(|variable| read_env(name, variable))
            .transpose()
    };
    let mut builder = if oauth.client_credentials {
        let client_id = oauth.client_id.clone().unwrap_or_default();
        let credentials = match secret(&oauth.private_key_env)? {
            Some(key) => MachineCredentials::private_key_jwt(
                client_id,
                key,
                oauth.signing_algorithm.as_deref().unwrap_or("ES256"),
            ),
            None => MachineCredentials::secret(
                client_id,
                secret(&oauth.client_secret_env)?.unwrap_or_default(),
            ),
        };
        OAuthClient::machine(url.clone(), credentials)
    } else {
        let store = oauth
            .token_store
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        tracing::info!(
            source = name,
            token_store = %store,
            "OAuth tokens are read from the token store; when the server refuses them, run \
             `toolkit-gen login --mcp-url {url} --token-store {store}`"
        );
        let mut builder = OAuthClient::builder(url.clone(), NoUser)
            .options(OAuthOptions::default().max_authorizations(0));
        if let Some(id) = &oauth.client_id {
            let secret = secret(&oauth.client_secret_env)?.map(Secret::new);
            builder = builder.pre_registered(RegisteredClient::new(id, secret));
        }
        builder
    };
    builder = builder.http(http);
    if let Some(issuer) = &oauth.issuer {
        builder = builder.issuer(issuer.clone());
    }
    if let Some(store) = &oauth.token_store {
        builder = builder.shared_store(open_store(name, store)?);
    }
    builder
        .build()
        .map_err(|error| ConfigError(format!("source {name:?}: {error}")))
}

/// `shared` (listed with the source's own grant) made again for each person with their own
/// grant, which they connect through `connects`' pages: kept in the source's token store under
/// `NAME#PRINCIPAL`, refreshed by that person's own client.
fn connected(
    config: &SourceConfig,
    oauth: &SourceOAuth,
    url: &reqwest::Url,
    shared: Arc<dyn ToolSource>,
    connects: &Arc<Connects>,
    options: &McpOptions,
) -> Result<Arc<dyn ToolSource>, ConfigError> {
    let name = config.name.clone();
    let Some(store_config) = &oauth.token_store else {
        return Err(ConfigError(format!(
            "source {name:?}: `oauth.per_person` needs `oauth.token_store`, where people's grants are kept"
        )));
    };
    let store = open_store(&name, store_config)?;
    let secret = oauth
        .client_secret_env
        .as_deref()
        .map(|variable| read_env(&name, variable))
        .transpose()?;
    let client = oauth
        .client_id
        .as_ref()
        .map(|id| RegisteredClient::new(id, secret.map(Secret::new)));
    let http = client_builder()
        .default_headers(headers(config)?)
        .build()
        .map_err(|error| {
            ConfigError(format!(
                "source {name:?}: cannot build an HTTP client: {error}"
            ))
        })?;
    let clients = Arc::new(PersonClients {
        url: url.clone(),
        store: Arc::clone(&store),
        http,
        client,
        issuer: oauth.issuer.clone(),
    });
    let login: Login = {
        let clients = Arc::clone(&clients);
        Arc::new(move |key: &str, callback: ConnectCallback| {
            let builder = OAuthClient::builder(clients.url.clone(), callback)
                .hosted_redirect()
                .options(
                    OAuthOptions::default().authorization_timeout(super::oauth_connect::EXPIRES),
                );
            clients.build(builder, key)
        })
    };
    let make: Make = {
        let (name, options) = (name.clone(), options.clone());
        Box::new(move |entry| {
            let key = entry
                .get(STORE_KEY)
                .ok_or_else(|| "no grant is named".to_owned())?;
            // Sends and refreshes the person's grant; never starts an authorization (the
            // person connects through the gateway's pages).
            let builder = OAuthClient::builder(clients.url.clone(), NoUser)
                .options(OAuthOptions::default().max_authorizations(0));
            let client = clients.build(builder, key)?;
            let source =
                Mcp::http_with_options(&name, clients.url.clone(), client, options.clone());
            Ok(Arc::new(source) as Arc<dyn ToolSource>)
        })
    };
    let credential =
        Credential::Connected(Connected::new(&name, store, Arc::clone(connects), login));
    Ok(Arc::new(PerPerson::new(shared, false, credential, make)))
}

/// What each person's OAuth client of a source shares: the server, the token store their grants
/// are kept in, the HTTP client, the client identity and issuer the source names.
struct PersonClients {
    url: reqwest::Url,
    store: Arc<dyn TokenStore>,
    http: reqwest::Client,
    client: Option<RegisteredClient>,
    issuer: Option<String>,
}

impl PersonClients {
    /// The client `builder` starts, keeping its grant under `key`.
    fn build(
        &self,
        builder: toolkit_auth::OAuthClientBuilder,
        key: &str,
    ) -> Result<OAuthClient, String> {
        let mut builder = builder
            .store_key(key)
            .shared_store(Arc::clone(&self.store))
            .http(self.http.clone());
        if let Some(client) = &self.client {
            builder = builder.pre_registered(client.clone());
        }
        if let Some(issuer) = &self.issuer {
            builder = builder.issuer(issuer.clone());
        }
        builder.build().map_err(|error| error.to_string())
    }
}

/// The authorization callback of a gateway: there is no user to send anywhere.
struct NoUser;

impl AuthorizationCallback for NoUser {
    fn redirect_uri(&self) -> reqwest::Url {
        // Never sent: the client starts no authorization (`max_authorizations` is 0).
        reqwest::Url::parse("http://127.0.0.1/callback").unwrap_or_else(|_| unreachable!())
    }

    fn authorize(&self, _: reqwest::Url) -> BoxFuture<'_, Result<reqwest::Url, AuthError>> {
        Box::pin(async {
            Err(AuthError::Refused(
                "the gateway cannot send a user to an authorization page".into(),
            ))
        })
    }
}

/// Warns, at the start, of a source whose operations need credentials it gives none of (no
/// `credentials`, `headers`, `per_person` or `on_behalf_of`): each of their calls would fail with
/// a refused credential, which is all its model reads.
fn warn_of_missing_credentials(
    config: &SourceConfig,
    requirements: &std::collections::BTreeMap<String, Vec<toolkit_http::SecurityRequirement>>,
) {
    if !config.credentials.is_empty()
        || !config.headers.is_empty()
        || config.per_person.is_some()
        || config.on_behalf_of.is_some()
    {
        return;
    }
    let needing: Vec<&Vec<toolkit_http::SecurityRequirement>> = requirements
        .values()
        .filter(|wanted| !wanted.is_empty() && wanted.iter().all(|one| !one.is_empty()))
        .collect();
    let mut schemes: Vec<&str> = needing
        .iter()
        .flat_map(|wanted| wanted.iter().flat_map(|one| one.keys().map(String::as_str)))
        .collect();
    schemes.sort_unstable();
    schemes.dedup();
    if let Some(first) = schemes.first() {
        tracing::warn!(
            source = %config.name,
            operations = needing.len(),
            "operations need a credential of the security scheme(s) {schemes:?} and the source \
             gives none: set `credentials = {{ {first} = \"VARIABLE\" }}` (VARIABLE: the \
             environment variable that holds it)"
        );
    }
}

/// How long an MCP server's call that keeps reporting progress may live: its
/// `max_call_seconds`, the runtime's default (10 minutes) when it does not say.
pub fn max_call_time(config: &SourceConfig) -> Duration {
    config
        .max_call_seconds
        .map_or(McpOptions::default().max_call_time, Duration::from_secs)
}

/// The source's headers, each value read from its variable and marked sensitive so that no log
/// shows it.
fn headers(config: &SourceConfig) -> Result<HeaderMap, ConfigError> {
    let mut map = HeaderMap::new();
    for (header, from) in &config.headers {
        let fail = |problem: &str| {
            ConfigError(format!(
                "source {:?}: header {header:?} {problem}",
                config.name
            ))
        };
        let name =
            HeaderName::from_bytes(header.as_bytes()).map_err(|_| fail("is no header name"))?;
        let value = format!("{}{}", from.prefix, read_env(&config.name, &from.env)?);
        let mut value = HeaderValue::from_str(&value)
            .map_err(|_| fail(&format!("cannot carry the value of {}", from.env)))?;
        value.set_sensitive(true);
        map.append(name, value);
    }
    Ok(map)
}

/// The tools of a GraphQL schema's root fields (or of the named operations of the files
/// `operations`), sent to `endpoint` over `http`, their selections checked against the schema
/// before any request: the schema of the file `schema`, or without one the endpoint's own,
/// introspected at the first listing.
fn graphql_source(
    name: &str,
    schema: Option<&std::path::Path>,
    operations: &[std::path::PathBuf],
    endpoint: &str,
    http: HeaderClient,
    timeout: Duration,
) -> Result<Arc<dyn ToolSource>, String> {
    use toolkit_http::graphql::{GraphqlSchema, GraphqlSource, OperationDocument};
    let mut documents = Vec::with_capacity(operations.len());
    for file in operations {
        let text = std::fs::read_to_string(file)
            .map_err(|error| format!("{}: cannot read: {error}", file.display()))?;
        documents.push(OperationDocument::new(file.display().to_string(), text));
    }
    let mut source = GraphqlSource::builder(name, endpoint, http)
        .timeout(timeout)
        .documents(documents);
    if let Some(path) = schema {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("{}: cannot read: {error}", path.display()))?;
        let schema = GraphqlSchema::read(&text, &path.display().to_string())
            .map_err(|error| error.to_string())?;
        source = source.schema(schema);
    }
    let source = source.build().map_err(|error| error.to_string())?;
    Ok(Arc::new(source))
}

/// The operations of the OpenAPI document at `path` (JSON or YAML), with their answers' schemas
/// when `answers`, or what stops reading it, prefixed with the file's name.
fn read_openapi(
    path: &std::path::Path,
    answers: bool,
) -> Result<toolkit_openapi::ReadOperations, String> {
    use toolkit_openapi::{ReadOptions, decode_document, read_operations};
    let located = |problem: String| format!("{}: {problem}", path.display());
    let text =
        std::fs::read_to_string(path).map_err(|error| located(format!("cannot read: {error}")))?;
    let document = decode_document(&text).map_err(|error| located(error.to_string()))?;
    // The answers' schemas are read only when they are served (`output_schema`): on the
    // largest documents they are most of what the reader copies.
    read_operations(&document, &ReadOptions::default().answers(answers))
        .map_err(|error| located(error.to_string()))
}
