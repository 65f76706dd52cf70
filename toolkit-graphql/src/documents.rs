//! Operations mode: one tool per named operation of `.graphql` files or of a persisted-query
//! manifest, [`read_operation_documents`].

use std::collections::HashSet;

use apollo_compiler::ExecutableDocument;
use apollo_compiler::ast::OperationType;
use serde_json::Value;
use toolkit_core::ToolDefinition;
use toolkit_openapi::operations::{GraphqlRequest, Operation, RequestTemplate};

use crate::hints::hints;
use crate::input_schema::{self, Defs, InputProperty};
use crate::problem::Problem;
use crate::read::{ReadOptions, ReadTools};
use crate::schema::GraphqlSchema;
use crate::skipped::{SkipReason, Skipped};

/// A document of operations: a `.graphql` file, or a persisted-query manifest (JSON
/// `{"operations": [{"name", "body"}]}`, Apollo's `apollo-persisted-query-manifest` among them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationDocument {
    /// The file's name, as problems show it.
    pub file: String,
    /// Its text.
    pub text: String,
}

impl OperationDocument {
    /// The document `text` of `file`.
    pub fn new(file: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            text: text.into(),
        }
    }
}

/// The tools of `documents`' named operations, each validated against `schema`: its variables
/// as its input, the whole document (with its fragments) as the query it sends.
///
/// A document that does not validate, or an anonymous operation, is a [`Problem`] at its file,
/// line and column, and gives no tool; the other documents still do. A subscription is
/// [`Skipped`]. A query is read-only and idempotent, a mutation neither.
///
/// # Examples
///
/// ```
/// use toolkit_graphql::{GraphqlSchema, OperationDocument, ReadOptions, read_operation_documents};
///
/// let schema = GraphqlSchema::read("type Query { user(login: String!): User } type User { name: String }", "s.graphql")?;
/// let documents = [
///     OperationDocument::new("user.graphql", "query User($login: String!) { user(login: $login) { name } }"),
///     OperationDocument::new("bad.graphql", "query Bad {\n  user { nope }\n}"),
/// ];
/// let read = read_operation_documents(&schema, &documents, &ReadOptions::default());
/// assert_eq!(read.operations[0].name(), "User");
/// assert_eq!((read.problems[0].file.as_str(), read.problems[0].line), ("bad.graphql", 2));
/// # Ok::<(), toolkit_graphql::SchemaError>(())
/// ```
pub fn read_operation_documents(
    schema: &GraphqlSchema,
    documents: &[OperationDocument],
    options: &ReadOptions,
) -> ReadTools {
    let mut read = ReadTools::default();
    let mut names = HashSet::new();
    for document in documents {
        if document.text.trim_start().starts_with('{') {
            match manifest(document) {
                Ok(entries) => {
                    for entry in entries {
                        read_document(schema, &entry, options, &mut names, &mut read);
                    }
                }
                Err(problem) => read.problems.push(problem),
            }
        } else {
            read_document(schema, document, options, &mut names, &mut read);
        }
    }
    read
}

/// The documents of a persisted-query manifest, each named `file#name`.
fn manifest(document: &OperationDocument) -> Result<Vec<OperationDocument>, Problem> {
    let json: Value = serde_json::from_str(&document.text).map_err(|error| {
        Problem::at(
            &document.file,
            error.line(),
            error.column(),
            error.to_string(),
        )
    })?;
    let operations = json
        .get("operations")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Problem::whole(
                &document.file,
                "a JSON document of operations has a list \"operations\" of {name, body}",
            )
        })?;
    operations
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let body = entry.get("body").and_then(Value::as_str).ok_or_else(|| {
                Problem::whole(
                    &document.file,
                    format!("operations[{index}] has no \"body\" text"),
                )
            })?;
            let name = entry
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| index.to_string(), str::to_owned);
            Ok(OperationDocument::new(
                format!("{}#{name}", document.file),
                body,
            ))
        })
        .collect()
}

fn read_document(
    schema: &GraphqlSchema,
    document: &OperationDocument,
    options: &ReadOptions,
    names: &mut HashSet<String>,
    read: &mut ReadTools,
) {
    let valid = match ExecutableDocument::parse_and_validate(
        schema.schema(),
        document.text.as_str(),
        document.file.as_str(),
    ) {
        Ok(valid) => valid,
        Err(invalid) => {
            read.problems
                .extend(Problem::from_diagnostics(&document.file, &invalid.errors));
            return;
        }
    };
    let located = |node_location: Option<apollo_compiler::parser::SourceSpan>| {
        let (line, column) = node_location
            .and_then(|location| location.line_column_range(&valid.sources))
            .map_or((0, 0), |range| (range.start.line, range.start.column));
        (line, column)
    };
    if let Some(anonymous) = &valid.operations.anonymous {
        let (line, column) = located(anonymous.location());
        read.problems.push(Problem::at(
            &document.file,
            line,
            column,
            "an anonymous operation is no tool: give it a name (`query Name { … }`)",
        ));
    }
    for (name, operation) in &valid.operations.named {
        let (line, column) = located(operation.location());
        let location = format!("{}:{line}:{column}", document.file);
        if operation.operation_type == OperationType::Subscription {
            read.skipped.push(Skipped {
                location,
                reason: SkipReason::Subscription,
            });
            continue;
        }
        if !names.insert(name.as_str().to_owned()) {
            read.skipped.push(Skipped {
                location,
                reason: SkipReason::DuplicateName {
                    name: name.as_str().to_owned(),
                },
            });
            continue;
        }
        let mut defs = Defs::new();
        let properties = operation.variables.iter().map(|variable| InputProperty {
            name: variable.name.as_str(),
            ty: &variable.ty,
            description: None,
            default: variable.default_value.as_deref(),
            deprecated: false,
        });
        let mut input = input_schema::object_schema(schema.schema(), properties, None, &mut defs);
        if !defs.is_empty() {
            input.insert("$defs".into(), Value::Object(defs.into_iter().collect()));
        }
        let query = operation.operation_type == OperationType::Query;
        let definition = match ToolDefinition::new(name.as_str(), input) {
            Ok(definition) => definition,
            Err(error) => {
                read.skipped.push(Skipped {
                    location,
                    reason: SkipReason::BadName {
                        problem: error.to_string(),
                    },
                });
                continue;
            }
        };
        let kind = if query { "query" } else { "mutation" };
        let definition = definition
            .with_description(format!("The GraphQL {kind} {name} ({}).", document.file))
            .with_annotations(hints(query));
        read.operations.push(Operation::new(
            definition,
            RequestTemplate::graphql(
                options.endpoint_path.clone(),
                GraphqlRequest::new(document.text.clone(), name.as_str()),
            ),
        ));
    }
}
