//! Schema mode: one tool per root `Query` and `Mutation` field, [`read_schema_tools`].

use std::collections::HashSet;

use apollo_compiler::Schema;
use apollo_compiler::ast::{OperationType, Type};
use apollo_compiler::schema::{ExtendedType, FieldDefinition};
use serde_json::{Value, json};
use toolkit_core::ToolDefinition;
use toolkit_openapi::operations::{GraphqlRequest, GraphqlSelection, Operation, RequestTemplate};

use crate::hints::hints;
use crate::input_schema::{self, Defs, InputProperty};
use crate::read::{ReadOptions, ReadTools};
use crate::schema::GraphqlSchema;
use crate::selection;
use crate::skipped::{SkipReason, Skipped};

/// The tools of `schema`'s root fields: one per field of `Query`, then one per field of
/// `Mutation`, named as the field (`repository`, `createIssue`), or `query_`/`mutation_` and the
/// field's name when both roots have it; subscriptions are [`Skipped`].
///
/// Each takes the field's arguments (see [`input_schema`](crate#input-schemas)) and, when the
/// field's type is no scalar or enum, an optional `selection`: the selection set to answer in
/// place of the default one (see [`ReadOptions::depth`]). A query is read-only and idempotent, a
/// mutation neither (so a default policy asks a person before running it).
///
/// # Examples
///
/// ```
/// use toolkit_graphql::{GraphqlSchema, ReadOptions, read_schema_tools};
///
/// let schema = GraphqlSchema::read(
///     "type Query { user(login: String!): User } type User { login: String! name: String }",
///     "schema.graphql",
/// )?;
/// let read = read_schema_tools(&schema, &ReadOptions::default());
/// let user = &read.operations[0];
/// assert_eq!(user.name(), "user");
/// let graphql = user.request.graphql.as_ref().map(|graphql| graphql.query.as_str());
/// assert_eq!(graphql, Some("query user($login: String!) { user(login: $login) { login name } }"));
/// # Ok::<(), toolkit_graphql::SchemaError>(())
/// ```
pub fn read_schema_tools(schema: &GraphqlSchema, options: &ReadOptions) -> ReadTools {
    let schema: &Schema = schema.schema();
    let mut read = ReadTools::default();
    let roots: Vec<(OperationType, &str)> = [OperationType::Query, OperationType::Mutation]
        .into_iter()
        .filter_map(|operation| Some((operation, schema.root_operation(operation)?.as_str())))
        .collect();
    let fields_of = |name: &str| match schema.types.get(name) {
        Some(ExtendedType::Object(object)) => object
            .fields
            .values()
            .map(|field| &field.node)
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    };
    // A name both roots have gets its root's prefix on both.
    let mut seen = HashSet::new();
    let mut shared = HashSet::new();
    for (_, root) in &roots {
        for field in fields_of(root) {
            if !seen.insert(field.name.as_str().to_owned()) {
                shared.insert(field.name.as_str().to_owned());
            }
        }
    }
    let mut names = HashSet::new();
    for (operation, root) in &roots {
        for field in fields_of(root) {
            if field.name.starts_with("__") {
                continue;
            }
            let name = if shared.contains(field.name.as_str()) {
                format!("{operation}_{}", field.name)
            } else {
                field.name.as_str().to_owned()
            };
            let location = format!("{root}.{}", field.name);
            if !names.insert(name.clone()) {
                read.skipped.push(Skipped {
                    location,
                    reason: SkipReason::DuplicateName { name },
                });
                continue;
            }
            match field_tool(schema, *operation, field, name, options) {
                Ok(tool) => read.operations.push(tool),
                Err(problem) => read.skipped.push(Skipped {
                    location,
                    reason: SkipReason::BadName { problem },
                }),
            }
        }
    }
    if let Some(root) = schema.root_operation(OperationType::Subscription) {
        for field in fields_of(root.as_str()) {
            read.skipped.push(Skipped {
                location: format!("{root}.{}", field.name),
                reason: SkipReason::Subscription,
            });
        }
    }
    read
}

/// The tool of one root field.
fn field_tool(
    schema: &Schema,
    operation: OperationType,
    field: &FieldDefinition,
    name: String,
    options: &ReadOptions,
) -> Result<Operation, String> {
    let mut defs = Defs::new();
    let properties = field.arguments.iter().map(|argument| InputProperty {
        name: argument.name.as_str(),
        ty: &argument.ty,
        description: argument.description.as_deref(),
        default: argument.default_value.as_deref(),
        deprecated: argument.directives.get("deprecated").is_some(),
    });
    let mut input = input_schema::object_schema(schema, properties, None, &mut defs);

    // `query repository($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {`
    let mut variables = Vec::new();
    let mut arguments = Vec::new();
    for argument in &field.arguments {
        // An argument with a default takes a nullable variable, so that leaving it out keeps
        // the default.
        let ty = if argument.default_value.is_some() {
            nullable(&argument.ty)
        } else {
            argument.ty.as_ref().clone()
        };
        variables.push(format!("${}: {ty}", argument.name));
        arguments.push(format!("{0}: ${0}", argument.name));
    }
    let mut head = format!("{operation} {}", field.name);
    if !variables.is_empty() {
        head.push_str(&format!("({})", variables.join(", ")));
    }
    head.push_str(&format!(" {{ {}", field.name));
    if !arguments.is_empty() {
        head.push_str(&format!("({})", arguments.join(", ")));
    }
    let type_name = field.ty.inner_named_type().as_str();
    let request = if selection::is_leaf(schema, type_name) {
        GraphqlRequest::new(format!("{head} }}"), field.name.as_str())
    } else {
        let default = selection::default_selection(schema, type_name, options.depth.max(1));
        let mut request =
            GraphqlRequest::new(format!("{head} {{ {default} }} }}"), field.name.as_str());
        if options.selection {
            let property = if field
                .arguments
                .iter()
                .any(|argument| argument.name == "selection")
            {
                "_selection"
            } else {
                "selection"
            };
            if let Some(Value::Object(properties)) = input.get_mut("properties") {
                properties.insert(
                    property.to_owned(),
                    json!({
                        "type": "string",
                        "description": format!(
                            "The fields of {type_name} to answer, as a GraphQL selection set \
                             (`id name owner {{ login }}`), validated against the schema \
                             (a bad one is refused). Without it: its scalar fields, {} level(s) deep.",
                            options.depth.max(1)
                        ),
                    }),
                );
            }
            request.selection = Some(GraphqlSelection {
                property: property.to_owned(),
                before: format!("{head} {{"),
                after: "} }".to_owned(),
            });
        }
        request
    };
    if !defs.is_empty() {
        input.insert("$defs".into(), Value::Object(defs.into_iter().collect()));
    }
    let query = operation == OperationType::Query;
    let mut definition = ToolDefinition::new(name, input)
        .map_err(|error| error.to_string())?
        .with_annotations(hints(query));
    let kind = if query { "query" } else { "mutation" };
    let description = match field.description.as_deref().filter(|text| !text.is_empty()) {
        Some(text) => format!(
            "{text}\n\n(GraphQL {kind} field `{}`: {})",
            field.name, field.ty
        ),
        None => format!("GraphQL {kind} field `{}`: {}", field.name, field.ty),
    };
    definition = definition.with_description(description);
    Ok(Operation::new(
        definition,
        RequestTemplate::graphql(options.endpoint_path.clone(), request),
    ))
}

/// `ty` without its outer non-null.
fn nullable(ty: &Type) -> Type {
    match ty {
        Type::NonNullNamed(name) => Type::Named(name.clone()),
        Type::NonNullList(item) => Type::List(item.clone()),
        other => other.clone(),
    }
}
