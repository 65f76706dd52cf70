//! [`HttpSource`]: a tool source of [`Operation`]s, sent to one base URL over a client the host
//! built.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;
use url::Url;

use super::Operation;
use super::answer::{self, Capped, Failing, MAX_ERROR_WORDS};
use super::client::HttpClient;
use super::credentials::{Applied, CredentialProvider, SourceSecurity};
use super::graphql_answer;
use super::redaction::Redactor;
use super::{CompiledTemplate, FilledRequest};
use super::{SecurityRequirement, SecurityScheme};
use toolkit_core::{BoxFuture, JsonObject, Reason, ToolDefinition, ToolSource, ToolSourceError};

/// How long a call may take, answer read included, unless the source says otherwise: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most characters of an answer a tool returns unless the source says otherwise: 200,000.
pub const DEFAULT_MAX_ANSWER_LENGTH: usize = 200_000;

/// A tool source of HTTP operations: each tool is one request to one base URL.
///
/// What the model gives fills the places the operation has for it (see
/// [`RequestTemplate`](super::RequestTemplate)) and decides nothing else: not the method, not the
/// path's shape, not a header the template does not name, not the host. The client, which the
/// host built, carries the credentials; they come last and win (see [`super::client`]).
///
/// A failure is a [`ToolSourceError`] whose model message never names the base URL or a
/// credential:
///
/// | what happened | reason |
/// | --- | --- |
/// | 401, 403 | [`Reason::Authentication`] |
/// | 408, 429, 5xx, no answer, a call longer than the timeout | [`Reason::Unavailable`], with `Retry-After` |
/// | any other 4xx | [`Reason::CallFailed`] with the API's words, cut to 500 characters |
/// | an answer longer than `max_answer_length` characters | [`Reason::CallFailed`], asking for less |
/// | an input that does not fit the template | [`Reason::InvalidInput`] |
/// | a GraphQL operation's 2xx with `errors` and no `data` | [`Reason::CallFailed`] with the errors' messages (see `graphql_answer`) |
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use toolkit_http::{HttpSource, Location, Operation, RequestTemplate, client_builder};
/// use toolkit_core::{ToolDefinition, ToolSource};
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "id": { "type": "integer" } },
///     "required": ["id"],
///     "additionalProperties": false
/// });
/// let get_pet = Operation::new(
///     ToolDefinition::new("get_pet", schema.as_object().cloned().unwrap_or_default())?,
///     RequestTemplate::new("GET", "/pets/{id}").parameter("id", Location::Path, "id"),
/// );
/// let source = HttpSource::builder("petstore", "https://petstore.example.com/v1", client_builder().build()?)
///     .operation(get_pet)
///     .timeout(std::time::Duration::from_secs(10))
///     .build()?;
/// assert_eq!(source.name(), "petstore");
/// assert_eq!(source.definitions()[0].name(), "get_pet");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct HttpSource {
    name: String,
    base: Url,
    /// The base URL's origin and the base URL as text, removed from any API words a model reads.
    redact: [String; 2],
    client: Arc<dyn HttpClient>,
    operations: IndexMap<String, (ToolDefinition, CompiledTemplate)>,
    timeout: Duration,
    max_answer_length: usize,
    security: Option<SourceSecurity>,
}

impl fmt::Debug for HttpSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSource")
            .field("name", &self.name)
            .field("operations", &self.operations.len())
            .field("timeout", &self.timeout)
            .field("max_answer_length", &self.max_answer_length)
            .finish_non_exhaustive()
    }
}

/// Builds an [`HttpSource`]; see [`HttpSource::builder`].
pub struct HttpSourceBuilder {
    name: String,
    base_url: String,
    client: Arc<dyn HttpClient>,
    operations: Vec<Operation>,
    /// Problems found before `build`: embedded operations that do not decode.
    problems: Vec<String>,
    timeout: Duration,
    max_answer_length: usize,
    security: Option<SourceSecurity>,
}

impl fmt::Debug for HttpSourceBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSourceBuilder")
            .field("name", &self.name)
            .field("operations", &self.operations.len())
            .finish_non_exhaustive()
    }
}

impl HttpSource {
    /// Starts a source named `name` that sends to `base_url` (such as
    /// `https://api.github.com` or `https://example.com/api/v2`) over `client`.
    pub fn builder(
        name: impl Into<String>,
        base_url: impl Into<String>,
        client: impl HttpClient,
    ) -> HttpSourceBuilder {
        HttpSourceBuilder {
            name: name.into(),
            base_url: base_url.into(),
            client: Arc::new(client),
            operations: Vec::new(),
            problems: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            max_answer_length: DEFAULT_MAX_ANSWER_LENGTH,
            security: None,
        }
    }

    /// The definitions of the source's operations, in order. Contacts nothing.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.operations
            .values()
            .map(|(definition, _)| definition.clone())
            .collect()
    }

    fn error(&self, reason: Reason) -> ToolSourceError {
        ToolSourceError::new(self.name.clone(), reason)
    }

    /// Sends `request` and reads what it answers. `applied` says which credentials it carries,
    /// kept out of every failure.
    ///
    /// A `graphql` answer that succeeded in HTTP is read as GraphQL's (see [`graphql_answer`]).
    async fn send(
        &self,
        request: reqwest::Request,
        applied: &Applied,
        graphql: bool,
    ) -> Result<Value, Reason> {
        let request_failed = |error: reqwest::Error| {
            if applied.in_url {
                request_failed(error.without_url())
            } else {
                request_failed(error)
            }
        };
        let response = self.client.execute(request).await.map_err(request_failed)?;
        if !same_origin(response.url(), &self.base) {
            // Never read: another site's words must not reach the model.
            return Err(Reason::call_failed(
                "The API redirected the request to another site, which the source does not follow.",
            ));
        }
        let status = response.status();
        tracing::Span::current().record("http.response.status_code", status.as_u16());
        match answer::failure_status(status, response.headers()) {
            Some(Failing::Now(reason)) => Err(reason),
            Some(Failing::WithWords(status)) => {
                let (words, cut) = match answer::read_capped(response, MAX_ERROR_WORDS)
                    .await
                    .map_err(request_failed)?
                {
                    Capped::Whole(words) => (words, false),
                    Capped::TooLong(words) => (words, true),
                };
                // Redacted before the cut to MAX_ERROR_WORDS, so that the cut never shows part
                // of a secret; a secret the read stopped inside is removed from where it began.
                let words =
                    Redactor::new(&applied.secrets).text(&String::from_utf8_lossy(&words), cut);
                Err(answer::call_failed(status, &self.redacted(&words)))
            }
            None => {
                let content_type = answer::content_type(response.headers());
                if answer::declared_too_long(response.headers(), self.max_answer_length) {
                    return Err(self.too_long());
                }
                match answer::read_capped(response, self.max_answer_length)
                    .await
                    .map_err(request_failed)?
                {
                    Capped::Whole(body) => {
                        let value = answer::success_value(body, content_type.as_deref())
                            .map(|value| Redactor::new(&applied.secrets).value(value))
                            .map_err(Reason::call_failed)?;
                        if graphql {
                            graphql_answer::graphql_result(value)
                        } else {
                            Ok(value)
                        }
                    }
                    Capped::TooLong(_) => Err(self.too_long()),
                }
            }
        }
    }

    fn too_long(&self) -> Reason {
        Reason::call_failed(format!(
            "The answer is longer than {} characters, more than a tool can return. Ask for less: \
             a smaller page, fewer fields, or a narrower filter.",
            self.max_answer_length
        ))
    }

    /// `words` without the base URL or its origin.
    fn redacted(&self, words: &str) -> String {
        let mut words = words.to_owned();
        for secret in &self.redact {
            if !secret.is_empty() && words.contains(secret.as_str()) {
                words = words.replace(secret.as_str(), "<the API>");
            }
        }
        words
    }
}

/// Whether `url` has the origin (scheme, host, port) of `base`, compared without allocating.
fn same_origin(url: &Url, base: &Url) -> bool {
    url.scheme() == base.scheme()
        && url.host() == base.host()
        && url.port_or_known_default() == base.port_or_known_default()
}

/// The reason of a request that got no answer.
fn request_failed(error: reqwest::Error) -> Reason {
    if error.is_redirect() {
        Reason::call_failed("The API redirected the request more often than the source follows.")
    } else if error.is_builder() {
        Reason::unknown(error.to_string())
    } else {
        // Connection refused or reset, a timeout of the client's own, a body cut short: all
        // worth trying again. The description names the address: it is for people only.
        Reason::unavailable(error.to_string())
    }
}

impl HttpSourceBuilder {
    /// Adds an operation.
    #[must_use]
    pub fn operation(mut self, operation: Operation) -> Self {
        self.operations.push(operation);
        self
    }

    /// Adds operations, in order (calls accumulate).
    #[must_use]
    pub fn operations(mut self, operations: impl IntoIterator<Item = Operation>) -> Self {
        self.operations.extend(operations);
        self
    }

    /// Adds the operations of `json`, in order: a JSON array of [`Operation`]s as they
    /// serialise, or a catalog that holds each `$defs` entry once (what `toolkit-gen` embeds in
    /// a generated source: see [`encode_operations`](super::encode_operations)). Operations that
    /// do not decode fail [`HttpSourceBuilder::build`].
    ///
    /// ```
    /// use toolkit_http::{HttpSource, client_builder};
    ///
    /// let operations = r#"[{
    ///     "definition": { "name": "ping", "inputSchema": { "type": "object" } },
    ///     "request": { "method": "GET", "path": "/ping" }
    /// }]"#;
    /// let source = HttpSource::builder("api", "https://api.example.com", client_builder().build()?)
    ///     .operations_json(operations)
    ///     .build()?;
    /// assert_eq!(source.definitions()[0].name(), "ping");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn operations_json(mut self, json: &str) -> Self {
        match super::decode_operations(json) {
            Ok(operations) => self.operations.extend(operations),
            Err(error) => self
                .problems
                .push(format!("the embedded operations do not decode: {error}")),
        }
        self
    }

    /// [`security`](Self::security) from JSON, as generated code embeds a document's security:
    /// `{"schemes": {name: scheme}, "requirements": {tool: [requirement]}}` (the shape of
    /// `openapi::Security`). JSON that does not decode is a problem [`build`](Self::build)
    /// reports.
    ///
    /// ```
    /// use toolkit_http::{Credential, Credentials, HttpSource, client_builder};
    ///
    /// let security = r#"{
    ///     "schemes": { "api_key": { "type": "apiKey", "name": "X-Api-Key", "in": "header" } },
    ///     "requirements": { "ping": [{ "api_key": [] }] }
    /// }"#;
    /// let credentials = Credentials::new().with("api_key", Credential::Token("key".into()));
    /// let source = HttpSource::builder("api", "https://api.example.com", client_builder().build()?)
    ///     .security_json(security, credentials)
    ///     .build()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn security_json(mut self, json: &str, provider: impl CredentialProvider) -> Self {
        #[derive(serde::Deserialize)]
        struct Embedded {
            #[serde(default)]
            schemes: std::collections::BTreeMap<String, SecurityScheme>,
            #[serde(default)]
            requirements: std::collections::BTreeMap<String, Vec<SecurityRequirement>>,
        }
        match serde_json::from_str::<Embedded>(json) {
            Ok(embedded) => self.security(embedded.schemes, embedded.requirements, provider),
            Err(error) => {
                self.problems
                    .push(format!("the embedded security does not decode: {error}"));
                self
            }
        }
    }

    /// How long a call may take, from sending the request to reading the whole answer
    /// ([`DEFAULT_TIMEOUT`] unless set). A call that takes longer fails as
    /// [`Reason::Unavailable`].
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The most characters of an answer a tool returns ([`DEFAULT_MAX_ANSWER_LENGTH`] unless
    /// set). A longer answer is not read past the cap and fails as [`Reason::CallFailed`],
    /// telling the model to ask for less.
    #[must_use]
    pub fn max_answer_length(mut self, characters: usize) -> Self {
        self.max_answer_length = characters;
        self
    }

    /// Puts credentials on each call as the operation's security requirements say: `schemes`
    /// (by name) and `requirements` (by operation name; alternatives, the first the `provider`
    /// meets is used), as `openapi::read_operations` reads them
    /// into `ReadOperations::security`. An API key goes in its header, query parameter or
    /// cookie; HTTP basic and bearer, OAuth 2 and OpenID Connect tokens in `Authorization`. A
    /// credential's value never appears in what a model reads, a failure or an answer, as sent,
    /// percent-encoded, JSON-escaped or in base64 (see `redaction.rs`). An operation whose
    /// requirements the provider meets none of is not sent: it fails as
    /// [`Reason::Authentication`], naming the schemes (unless one requirement is empty, `{}`:
    /// then it goes without).
    ///
    /// Where the host configured credentials for several alternatives, only the first
    /// alternative it meets, in the document's order, is sent: an API reads alternatives as
    /// "any one of", and a credential sent to an API that did not ask for it is one more place
    /// it can leak. A credential parameter an operation declares *required* is the exception:
    /// the reader adds its scheme to every alternative, so the API gets it whichever one is met
    /// (a document may list `key` and `token` as alternatives on operations that want both).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use toolkit_http::{Credential, Credentials, HttpSource, KeyLocation, SecurityScheme, client_builder};
    ///
    /// let schemes = BTreeMap::from([(
    ///     "api_key".to_owned(),
    ///     SecurityScheme::ApiKey { name: "X-Api-Key".into(), location: KeyLocation::Header },
    /// )]);
    /// let requirements = BTreeMap::from([(
    ///     "list_pets".to_owned(),
    ///     vec![BTreeMap::from([("api_key".to_owned(), Vec::new())])],
    /// )]);
    /// let source = HttpSource::builder("pets", "https://pets.example.com", client_builder().build()?)
    ///     .security(schemes, requirements, Credentials::new().with("api_key", Credential::Token("key".into())))
    ///     .build()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn security(
        mut self,
        schemes: std::collections::BTreeMap<String, SecurityScheme>,
        requirements: std::collections::BTreeMap<String, Vec<SecurityRequirement>>,
        provider: impl CredentialProvider,
    ) -> Self {
        self.security = Some(SourceSecurity {
            schemes,
            requirements,
            provider: Box::new(provider),
        });
        self
    }

    /// Checks the base URL and every operation, and builds the source.
    ///
    /// # Errors
    ///
    /// [`HttpSourceError`] with every problem: a base URL that is not `http` or `https` or has a
    /// query or fragment, two operations of one name, a template that does not fit its
    /// parameters.
    pub fn build(self) -> Result<HttpSource, HttpSourceError> {
        let mut problems = self.problems;
        let base = match Url::parse(&self.base_url) {
            Ok(base) if !matches!(base.scheme(), "http" | "https") => {
                problems.push("the base URL is not http or https".to_owned());
                None
            }
            Ok(base) if base.fragment().is_some() || base.query().is_some() => {
                problems.push("the base URL has a query or a fragment".to_owned());
                None
            }
            Ok(base) => Some(base),
            Err(error) => {
                problems.push(format!("the base URL is not a URL: {error}"));
                None
            }
        };
        if self.name.is_empty() {
            problems.push("the source's name is empty".to_owned());
        }
        let mut operations = IndexMap::with_capacity(self.operations.len());
        for operation in self.operations {
            let name = operation.name().to_owned();
            match CompiledTemplate::new(&operation.request) {
                Ok(compiled) => {
                    if operations
                        .insert(name.clone(), (operation.definition, compiled))
                        .is_some()
                    {
                        problems.push(format!("two operations are named {name:?}"));
                    }
                }
                Err(found) => problems.extend(
                    found
                        .into_iter()
                        .map(|problem| format!("operation {name:?}: {problem}")),
                ),
            }
        }
        match base {
            Some(base) if problems.is_empty() => {
                let origin = base.origin().ascii_serialization();
                let whole = base.as_str().trim_end_matches('/').to_owned();
                Ok(HttpSource {
                    name: self.name,
                    redact: [whole, origin],
                    base,
                    client: self.client,
                    operations,
                    timeout: self.timeout,
                    max_answer_length: self.max_answer_length,
                    security: self.security,
                })
            }
            _ => Err(HttpSourceError { problems }),
        }
    }
}

impl ToolSource for HttpSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(crate::telemetry::discovering(&self.name, async move {
            Ok(self.definitions())
        }))
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        _context: &'a toolkit_core::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async move {
            let Some((_, template)) = self.operations.get(tool) else {
                return Err(self.error(Reason::not_found(format!("no operation named {tool:?}"))));
            };
            let graphql = template.is_graphql();
            let request = template
                .request(&self.base, &input)
                .map(to_reqwest)
                .map_err(|message| self.error(Reason::invalid_input(message)))?;
            let span = crate::telemetry::http_request(request.method().as_str(), &self.name, tool);
            let sent = async {
                let Some(security) = &self.security else {
                    return self.send(request, &Applied::default(), graphql).await;
                };
                let again = request.try_clone();
                let mut request = request;
                let applied = security
                    .apply(tool, &mut request)
                    .await
                    .map_err(Reason::authentication)?;
                let outcome = self.send(request, &applied, graphql).await;
                // A refused credential the provider renews (a token fetched again): once more.
                if let (Err(Reason::Authentication { .. }), Some(mut again)) = (&outcome, again)
                    && !applied.schemes.is_empty()
                    && security.refused(&applied).await
                {
                    let applied = security
                        .apply(tool, &mut again)
                        .await
                        .map_err(Reason::authentication)?;
                    return self.send(again, &applied, graphql).await;
                }
                outcome
            };
            let sent = tokio::time::timeout(self.timeout, sent);
            let outcome = match tracing::Instrument::instrument(sent, span.clone()).await {
                Ok(outcome) => outcome,
                Err(_) => Err(Reason::unavailable(format!(
                    "the call took longer than its timeout of {:?}",
                    self.timeout
                ))),
            };
            crate::telemetry::record_end(&span, outcome.as_ref().err().map(Reason::code));
            match &outcome {
                Ok(_) => tracing::debug!(source = %self.name, tool, "HTTP call answered"),
                Err(reason) => {
                    tracing::info!(source = %self.name, tool, code = reason.code(), "HTTP call failed");
                    tracing::debug!(source = %self.name, tool, description = reason.description(), "why");
                }
            }
            outcome.map_err(|reason| self.error(reason))
        })
    }
}

/// An [`HttpSource`] that could not be built, with every problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSourceError {
    problems: Vec<String>,
}

impl HttpSourceError {
    /// Each problem, as a sentence.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for HttpSourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the HTTP source cannot be built: {}",
            self.problems.join("; ")
        )
    }
}

impl std::error::Error for HttpSourceError {}

/// The filled request of a template, as reqwest sends it.
fn to_reqwest(filled: FilledRequest) -> reqwest::Request {
    let FilledRequest {
        method,
        url,
        headers,
        body,
        ..
    } = filled;
    let mut request = reqwest::Request::new(method, url);
    *request.headers_mut() = headers;
    *request.body_mut() = body.map(reqwest::Body::from);
    request
}
