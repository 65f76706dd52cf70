//! An HTTP operation as data: [`Operation`] = a [`ToolDefinition`] + a [`RequestTemplate`].
//!
//! Both are serde data, so a host stores operations in its catalog beside the definitions and
//! builds an [`HttpSource`](super::HttpSource) from them without reading a document again.
//!
//! ```
//! use serde_json::json;
//! use toolkit_runtime::http::{Location, Operation};
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

use crate::ToolDefinition;

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
}

impl RequestTemplate {
    /// A template of `method` and `path` with no parameters and no body.
    pub fn new(method: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            path: path.into(),
            parameters: Vec::new(),
            body: None,
        }
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
        });
        self
    }

    /// This template with the input's `property` sent as the body, encoded as `encoding`.
    #[must_use]
    pub fn body(mut self, property: impl Into<String>, encoding: BodyEncoding) -> Self {
        self.body = Some(Body {
            property: property.into(),
            encoding,
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
