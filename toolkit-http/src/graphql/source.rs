//! [`GraphqlSource`]: a GraphQL endpoint's tools, read from a schema given or introspected at
//! the first listing or call, sent by an [`HttpSource`] under a [`SelectionCheck`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::OnceCell;
use toolkit_graphql::{
    GraphqlSchema, MAX_SCHEMA_LENGTH, OperationDocument, ReadOptions, ReadTools, SelectionCheck,
    read_operation_documents, read_schema_tools,
};

use super::introspection::introspect;
use crate::{DEFAULT_MAX_ANSWER_LENGTH, DEFAULT_TIMEOUT, HttpClient, HttpSource};
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Reason, ToolDefinition, ToolSource, ToolSourceError,
};

/// The tools of a GraphQL endpoint, one per root `Query` and `Mutation` field (or per named
/// operation of the documents given), each a `POST` of `{"query", "operationName",
/// "variables"}` to the endpoint.
///
/// Without a schema, the endpoint is introspected once, at the first listing or call, with its
/// answer capped at [`GraphqlSourceBuilder::max_schema_length`]; two at once wait for the same
/// introspection, and one that failed is tried again at the next. A schema that changes later
/// is not seen: build the source again.
///
/// The selections a model writes are checked against the schema before any request
/// ([`SelectionCheck`]); answers are read as [`HttpSource`] reads a GraphQL answer (`errors`
/// beside `data` is a result, `errors` alone a failure).
pub struct GraphqlSource {
    name: String,
    endpoint: String,
    client: Arc<dyn HttpClient>,
    documents: Vec<OperationDocument>,
    options: ReadOptions,
    timeout: Duration,
    max_answer_length: usize,
    max_schema_length: usize,
    tools: OnceCell<Arc<dyn ToolSource>>,
}

impl fmt::Debug for GraphqlSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphqlSource")
            .field("name", &self.name)
            .field("read", &self.tools.initialized())
            .finish_non_exhaustive()
    }
}

/// What [`GraphqlSource::builder`] starts.
#[must_use]
pub struct GraphqlSourceBuilder {
    source: GraphqlSource,
    schema: Option<GraphqlSchema>,
}

impl fmt::Debug for GraphqlSourceBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphqlSourceBuilder")
            .field("name", &self.source.name)
            .field("schema", &self.schema.is_some())
            .finish_non_exhaustive()
    }
}

impl GraphqlSource {
    /// Starts a source named `name` whose requests go to `endpoint` (such as
    /// `https://api.github.com/graphql`) over `client`, which carries the credentials.
    pub fn builder(
        name: impl Into<String>,
        endpoint: impl Into<String>,
        client: impl HttpClient,
    ) -> GraphqlSourceBuilder {
        GraphqlSourceBuilder {
            source: GraphqlSource {
                name: name.into(),
                endpoint: endpoint.into(),
                client: Arc::new(client),
                documents: Vec::new(),
                options: ReadOptions::default(),
                timeout: DEFAULT_TIMEOUT,
                max_answer_length: DEFAULT_MAX_ANSWER_LENGTH,
                max_schema_length: MAX_SCHEMA_LENGTH,
                tools: OnceCell::new(),
            },
            schema: None,
        }
    }

    /// The source that sends the tools, read now if they were not: introspecting the endpoint
    /// first when no schema was given.
    async fn tools(&self) -> Result<&Arc<dyn ToolSource>, ToolSourceError> {
        self.tools
            .get_or_try_init(|| async {
                let schema = introspect(
                    self.client.as_ref(),
                    &self.endpoint,
                    self.max_schema_length,
                    self.timeout,
                )
                .await?;
                self.sending(&schema).map_err(Reason::invalid_response)
            })
            .await
            .map_err(|reason| ToolSourceError::new(self.name.as_str(), reason))
    }

    /// The tools of `schema` (of its root fields, or of the documents' operations), sent by an
    /// [`HttpSource`] under a [`SelectionCheck`].
    fn sending(&self, schema: &GraphqlSchema) -> Result<Arc<dyn ToolSource>, String> {
        let read: ReadTools = if self.documents.is_empty() {
            read_schema_tools(schema, &self.options)
        } else {
            read_operation_documents(schema, &self.documents, &self.options)
        };
        if !read.problems.is_empty() {
            let problems: Vec<String> = read.problems.iter().map(ToString::to_string).collect();
            return Err(problems.join("; "));
        }
        for skipped in &read.skipped {
            tracing::warn!(
                source = self.name,
                "{} is no tool: {}",
                skipped.location,
                skipped.reason
            );
        }
        let http = HttpSource::builder(
            self.name.as_str(),
            self.endpoint.as_str(),
            Arc::clone(&self.client),
        )
        .operations(read.operations.iter().cloned())
        .timeout(self.timeout)
        .max_answer_length(self.max_answer_length)
        .build()
        .map_err(|error| error.to_string())?;
        Ok(Arc::new(SelectionCheck::new(
            Arc::new(http),
            schema,
            &read.operations,
        )))
    }
}

impl GraphqlSourceBuilder {
    /// Reads the tools from `schema` (when [`build`](Self::build) runs) instead of
    /// introspecting the endpoint.
    pub fn schema(mut self, schema: GraphqlSchema) -> Self {
        self.schema = Some(schema);
        self
    }

    /// One tool per named operation of `documents` (`.graphql` files or persisted-query
    /// manifests), its variables as the input, instead of one per root field.
    pub fn documents(mut self, documents: impl IntoIterator<Item = OperationDocument>) -> Self {
        self.source.documents = documents.into_iter().collect();
        self
    }

    /// How the schema becomes tools: the default selections' depth, whether a model may write
    /// a `selection`.
    pub fn options(mut self, options: ReadOptions) -> Self {
        self.source.options = options;
        self
    }

    /// How long a call (and the introspection) may take, from the request to the answer's last
    /// byte: [`DEFAULT_TIMEOUT`] unless set.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.source.timeout = timeout;
        self
    }

    /// The most characters of an answer a tool returns: [`DEFAULT_MAX_ANSWER_LENGTH`] unless
    /// set.
    pub fn max_answer_length(mut self, characters: usize) -> Self {
        self.source.max_answer_length = characters;
        self
    }

    /// The most characters of an introspection answer read: [`MAX_SCHEMA_LENGTH`] unless set,
    /// and never more (a schema text over it is not read).
    pub fn max_schema_length(mut self, characters: usize) -> Self {
        self.source.max_schema_length = characters.min(MAX_SCHEMA_LENGTH);
        self
    }

    /// The source. With a [`schema`](Self::schema), its tools are read now; without one, at the
    /// first listing or call.
    ///
    /// # Errors
    ///
    /// [`GraphqlSourceError`] with every problem of the documents given (each at its file, line
    /// and column), or of the HTTP source (an endpoint that is no URL).
    pub fn build(self) -> Result<GraphqlSource, GraphqlSourceError> {
        let source = self.source;
        if let Some(schema) = self.schema {
            let tools = source
                .sending(&schema)
                .map_err(|problem| GraphqlSourceError { problem })?;
            let _ = source.tools.set(tools);
        } else if let Err(error) = reqwest::Url::parse(&source.endpoint) {
            return Err(GraphqlSourceError {
                problem: format!("the endpoint {:?} is no URL: {error}", source.endpoint),
            });
        }
        Ok(source)
    }
}

impl ToolSource for GraphqlSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async move { self.tools().await?.discover().await })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async move { self.tools().await?.call(tool, input, context).await })
    }
}

/// A [`GraphqlSource`] that could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphqlSourceError {
    problem: String,
}

impl fmt::Display for GraphqlSourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the GraphQL source cannot be built: {}", self.problem)
    }
}

impl std::error::Error for GraphqlSourceError {}
