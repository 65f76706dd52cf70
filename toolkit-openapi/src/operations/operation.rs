//! An HTTP operation as data: [`Operation`] = a [`ToolDefinition`] + a [`RequestTemplate`].
//!
//! Both are serde data, so a host stores operations in its catalog beside the definitions and
//! builds an [`HttpSource`](super::HttpSource) from them without reading a document again.
//!
//! ```
//! use serde_json::json;
//! use toolkit_openapi::operations::{Location, Operation};
//!
//! let operation: Operation = serde_json::from_value(json!({
//!     "definition": {
//!         "name": "get_pet",
//!         "inputSchema": {
//!             "type": "object",
//!             "properties": { "id": { "type": "integer" } },
//!             "required": ["id"]
//!         },
//!         "annotations": { "readOnly": true }
//!     },
//!     "request": {
//!         "method": "GET",
//!         "path": "/pets/{id}",
//!         "parameters": [{ "property": "id", "in": "path", "name": "id" }]
//!     }
//! }))?;
//! assert_eq!(operation.name(), "get_pet");
//! assert_eq!(operation.request.parameters[0].location, Location::Path);
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use toolkit_core::ToolDefinition;

/// A tool that is an HTTP request: what the model is told, and how its input becomes a request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    /// The tool as the model sees it; its input's properties are the ones `request` places.
    pub definition: ToolDefinition,
    /// Where each property of the input goes in the request.
    pub request: RequestTemplate,
}

impl Operation {
    /// An operation of this definition and request template.
    pub fn new(definition: ToolDefinition, request: RequestTemplate) -> Self {
        Self {
            definition,
            request,
        }
    }

    /// The tool's name, as its definition has it.
    pub fn name(&self) -> &str {
        self.definition.name()
    }
}

/// How an input object becomes an HTTP request: the method, the path template, where each
/// property goes, and which property holds the body.
///
/// Nothing else of the request comes from the model: the method, the path's shape, the header
/// names and the query keys are the template's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestTemplate {
    /// The method, upper case: `GET`, `POST`, …
    pub method: String,
    /// The path below the base URL, with `{name}` where a path parameter's value goes:
    /// `/pets/{petId}`. It may end with a fixed query the document wrote, `/responses?beta=true`,
    /// which every request carries before the model's query parameters.
    pub path: String,
    /// Where the input's properties go, other than the body.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    /// The property that holds the body, and how the body is encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    /// The `Accept` header every request carries: the media types the operation answers
    /// (`application/json, image/png, */*;q=0.1`); without it, the client's (`*/*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// For a GraphQL operation: the fixed query the request carries. The request is then a JSON
    /// body `{"query", "operationName", "variables"}` whose `variables` are the input's
    /// properties; the template has no parameters and no body of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphql: Option<GraphqlRequest>,
}

/// A GraphQL request as data: `POST` with the JSON body `{"query": query, "operationName":
/// operation_name, "variables": the input}`. The query is the template's, never the model's,
/// except the one selection set a [`GraphqlSelection`] lets the model write in its place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphqlRequest {
    /// The GraphQL document sent, with the operation `operation_name` in it.
    pub query: String,
    /// The operation of `query` to run.
    pub operation_name: String,
    /// The input property whose text, when given, is the selection set of the operation's field
    /// in place of the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<GraphqlSelection>,
}

/// Where a selection set the model writes goes: the query is `before` + the selection + `after`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphqlSelection {
    /// The input property that holds the selection set's text (`name owner { login }`).
    pub property: String,
    /// The query up to the selection set's `{`, included.
    pub before: String,
    /// The query from the selection set's `}`, included.
    pub after: String,
}

impl GraphqlRequest {
    /// A request of `query` running its operation `operation_name`.
    pub fn new(query: impl Into<String>, operation_name: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            operation_name: operation_name.into(),
            selection: None,
        }
    }

    /// The query sent for `selection`, the text the model gave for the selection set (with or
    /// without its braces), or the fixed query when there is none.
    ///
    /// # Errors
    ///
    /// A message for the model when the text is not one selection set: its braces do not pair,
    /// or a string or block string is never closed. That is all this checks, so the text stays
    /// inside the operation's field; whether it fits the schema is for a GraphQL validator (the
    /// server's, and `toolkit-graphql`'s before the request).
    pub fn query_for(&self, selection: Option<&str>) -> Result<String, String> {
        let (Some(place), Some(text)) = (&self.selection, selection) else {
            return Ok(self.query.clone());
        };
        let mut text = text.trim();
        if text.starts_with('{') && text.ends_with('}') && closes_at_end(text) {
            text = text[1..text.len() - 1].trim();
        }
        if text.is_empty() {
            return Err(format!(
                "The property {:?} is an empty selection set.",
                place.property
            ));
        }
        match depth_at_end(text) {
            Some(0) => Ok(format!("{} {text} {}", place.before, place.after)),
            _ => Err(format!(
                "The property {:?} is not one selection set (fields, with their own selections in \
                 braces): its braces do not pair, or a string in it is never closed.",
                place.property
            )),
        }
    }
}

/// Whether the `{` that opens `text` closes at its last character and not before.
fn closes_at_end(text: &str) -> bool {
    let inner = &text[1..text.len() - 1];
    depth_at_end(inner) == Some(0)
}

/// The depth of braces at the end of GraphQL `text`, skipping strings, block strings and
/// comments; `None` when a `}` closes more than was opened or a string never ends. Written by
/// hand: this crate parses no GraphQL, and this is all the request template needs to know.
fn depth_at_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("\"\"\"") {
            // A block string: up to the next `"""` not escaped as `\"""`.
            let mut search = after;
            loop {
                let end = search.find("\"\"\"")?;
                if search[..end].ends_with('\\') {
                    search = &search[end + 3..];
                } else {
                    rest = &search[end + 3..];
                    break;
                }
            }
            continue;
        }
        rest = &rest[c.len_utf8()..];
        match c {
            '"' => {
                let mut chars = rest.char_indices();
                loop {
                    match chars.next()? {
                        (_, '\\') => {
                            chars.next()?;
                        }
                        (_, '\n' | '\r') => return None,
                        (at, '"') => {
                            rest = &rest[at + 1..];
                            break;
                        }
                        _ => {}
                    }
                }
            }
            '#' => rest = rest.find(['\n', '\r']).map_or("", |end| &rest[end..]),
            '{' => depth += 1,
            '}' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    Some(depth)
}

impl RequestTemplate {
    /// A template of `method` and `path` with no parameters and no body.
    pub fn new(method: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            path: path.into(),
            parameters: Vec::new(),
            body: None,
            accept: None,
            graphql: None,
        }
    }

    /// A GraphQL request: `POST` to `path` (the endpoint, below the base URL) with `request`'s
    /// query, and the input as its variables.
    pub fn graphql(path: impl Into<String>, request: GraphqlRequest) -> Self {
        Self {
            graphql: Some(request),
            ..Self::new("POST", path)
        }
    }

    /// This template with the `Accept` header `accept` on every request.
    #[must_use]
    pub fn accept(mut self, accept: impl Into<String>) -> Self {
        self.accept = Some(accept.into());
        self
    }

    /// This template with one more parameter: the input's `property` goes to `location` as
    /// `name`.
    #[must_use]
    pub fn parameter(
        mut self,
        property: impl Into<String>,
        location: Location,
        name: impl Into<String>,
    ) -> Self {
        self.parameters.push(Parameter {
            property: property.into(),
            location,
            name: name.into(),
            joined: false,
            style: QueryStyle::Form,
            allow_reserved: false,
        });
        self
    }

    /// This template with one more path parameter in RFC 6570's reserved expansion
    /// (`{+name}`, as Google's Discovery documents write resource names): its value may hold
    /// `/` between non-empty segments, never a `.` or `..` segment, `?` or `#` (see
    /// [`Parameter::allow_reserved`]).
    #[must_use]
    pub fn reserved_path(mut self, property: impl Into<String>, name: impl Into<String>) -> Self {
        self.parameters.push(Parameter {
            property: property.into(),
            location: Location::Path,
            name: name.into(),
            joined: false,
            style: QueryStyle::Form,
            allow_reserved: true,
        });
        self
    }

    /// This template with one more query parameter whose list is sent as one value joined by
    /// commas (OpenAPI's `explode: false`).
    #[must_use]
    pub fn joined_query(mut self, property: impl Into<String>, name: impl Into<String>) -> Self {
        self.parameters.push(Parameter {
            property: property.into(),
            location: Location::Query,
            name: name.into(),
            joined: true,
            style: QueryStyle::Form,
            allow_reserved: false,
        });
        self
    }

    /// This template with one more query parameter written in `style`: a `spaceDelimited` or
    /// `pipeDelimited` list is one value joined by its delimiter, a `deepObject` a key per
    /// leaf (`filter[status]=open`), a `form` one a key per list item.
    #[must_use]
    pub fn styled_query(
        mut self,
        property: impl Into<String>,
        name: impl Into<String>,
        style: QueryStyle,
    ) -> Self {
        self.parameters.push(Parameter {
            property: property.into(),
            location: Location::Query,
            name: name.into(),
            joined: matches!(
                style,
                QueryStyle::SpaceDelimited | QueryStyle::PipeDelimited
            ),
            style,
            allow_reserved: false,
        });
        self
    }

    /// This template with the input's `property` sent as the body, encoded as `encoding`.
    #[must_use]
    pub fn body(mut self, property: impl Into<String>, encoding: BodyEncoding) -> Self {
        self.body = Some(Body {
            property: property.into(),
            encoding,
            deep_objects: Vec::new(),
        });
        self
    }

    /// This template with the input's `property` sent as a form body whose fields named in
    /// `fields` are written as `deepObject`s (`metadata[key]=value`, `expand[]=a`), as Stripe's
    /// and Rails' forms take nested values; the other fields as `form` does.
    #[must_use]
    pub fn form_body(
        mut self,
        property: impl Into<String>,
        fields: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.body = Some(Body {
            property: property.into(),
            encoding: BodyEncoding::Form,
            deep_objects: fields.into_iter().map(Into::into).collect(),
        });
        self
    }
}

/// One property of the input and the place of the request it fills.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameter {
    /// The input's property.
    pub property: String,
    /// Where its value goes.
    #[serde(rename = "in")]
    pub location: Location,
    /// The name there: the `{name}` of the path, the query key, or the header name.
    pub name: String,
    /// For a query parameter: a list is sent as one value joined by commas (OpenAPI's
    /// `explode: false`) rather than as a key per value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub joined: bool,
    /// For a query parameter: how its value is written (OpenAPI's `style`); `form` unless the
    /// document says otherwise.
    #[serde(default, skip_serializing_if = "QueryStyle::is_form")]
    pub style: QueryStyle,
    /// For a path parameter: RFC 6570's reserved expansion (`{+name}`; OpenAPI's
    /// `allowReserved`), as Google's Discovery documents write resource names
    /// (`v1/{+name}` with `projects/p/topics/t`). The value may hold `/` between segments and
    /// keeps RFC 3986's sub-delimiters, `:` and `@` as they are; it is refused when a segment
    /// is empty, `.` or `..`, or when it holds `?` or `#`, and every other character
    /// (`%` too, so no escape can hide a `/..`) is percent-encoded: it fills its own segments
    /// and never changes the rest of the path, the query or the host.
    #[serde(
        default,
        rename = "allowReserved",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub allow_reserved: bool,
}

/// How a query parameter's value is written, as OpenAPI 3.1's `style` says. With `joined` (`explode: false`), `form` joins
/// a list with commas; `spaceDelimited` and `pipeDelimited` are always joined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum QueryStyle {
    /// `form`: a key per list item (`id=1&id=2`), or one value joined by commas (`id=1,2`).
    #[default]
    Form,
    /// `spaceDelimited`: a list (or an object's keys and values) joined by spaces: `id=1%202`.
    SpaceDelimited,
    /// `pipeDelimited`: a list (or an object's keys and values) joined by `|`: `id=1|2`.
    PipeDelimited,
    /// `deepObject`: a key per leaf, nested in brackets as Stripe and Rails read them:
    /// `filter[status]=open`, `expand[]=a&expand[]=b`, `items[0][price]=p`.
    DeepObject,
}

impl QueryStyle {
    /// Whether this is `form`, the default.
    pub fn is_form(&self) -> bool {
        *self == Self::Form
    }

    /// The style as OpenAPI's `style` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Form => "form",
            Self::SpaceDelimited => "spaceDelimited",
            Self::PipeDelimited => "pipeDelimited",
            Self::DeepObject => "deepObject",
        }
    }
}

/// A place of a request that a property fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// A `{name}` of the path: one value, percent-encoded, never empty, `.` or `..`.
    Path,
    /// A query parameter: a value, or a list sent as one key per value.
    Query,
    /// A header: a value, or a list joined by commas; never one that could add a header.
    Header,
}

impl Location {
    /// The place as OpenAPI's `in` names it: `path`, `query` or `header`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Path => "path",
            Self::Query => "query",
            Self::Header => "header",
        }
    }
}

/// The property that holds the body of the request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Body {
    /// The input's property.
    pub property: String,
    /// How its value is written.
    #[serde(default)]
    pub encoding: BodyEncoding,
    /// For a form body: the fields written as `deepObject`s (OpenAPI's `encoding` with
    /// `style: deepObject`), so a nested object or list is sent as `field[key]=value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deep_objects: Vec<String>,
}

/// How a body is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyEncoding {
    /// `application/json`: the value as JSON.
    #[default]
    Json,
    /// `application/x-www-form-urlencoded`: an object whose values are strings, numbers,
    /// booleans, or lists of them (a key per value).
    Form,
}
