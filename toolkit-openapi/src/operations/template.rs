//! A [`RequestTemplate`] checked once and kept ready to fill: [`CompiledTemplate`], whose
//! [`request`](CompiledTemplate::request) is the [`FilledRequest`] of one call.
//!
//! Templates are data a host stores, so a source checks them when it is built (a method that is
//! a token, a path that starts with `/` and has no query, fragment or dot segment, a `{name}` for
//! every path parameter and a path parameter for every `{name}`, header names that are names,
//! distinct properties) and fills them on every call with what the model gave. The filled
//! request is plain data (method, URL, headers, body): whichever HTTP client sends it, nothing
//! the model wrote can add a header, change the path's shape or reach another host.

use std::collections::HashSet;

use http::{HeaderName, Method};
use percent_encoding::utf8_percent_encode;

use super::encoding::PATH_LITERAL;
use super::operation::{BodyEncoding, GraphqlRequest, Location, QueryStyle, RequestTemplate};

/// Headers no template may fill: the client's credentials, what HTTP itself sets, and what
/// would let a value reroute or reframe the request.
const RESERVED_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "expect",
];

/// A piece of a path template.
#[derive(Debug)]
enum Piece {
    /// Text of the template, already percent-encoded.
    Literal(String),
    /// The value of this input property, encoded when the request is made.
    Value(String),
    /// The value of this input property in reserved expansion (`{+name}`): it may fill
    /// several segments (see [`encoding::reserved_path`](super::encoding)).
    Reserved(String),
}

/// A query parameter of a template.
#[derive(Debug)]
struct QueryPlace {
    property: String,
    name: String,
    style: QueryStyle,
    /// A `form` list joined by commas.
    joined: bool,
}

/// The body of a template.
#[derive(Debug)]
struct BodyPlace {
    property: String,
    encoding: BodyEncoding,
    /// The form fields written as `deepObject`s.
    deep_objects: HashSet<String>,
}

/// A request template, checked and ready to fill.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use toolkit_openapi::operations::{CompiledTemplate, Location, RequestTemplate};
/// use url::Url;
///
/// let template = RequestTemplate::new("GET", "/pets/{petId}").parameter("id", Location::Path, "petId");
/// let compiled = CompiledTemplate::new(&template).map_err(|problems| problems.join("; "))?;
/// let base = Url::parse("https://api.example.com/v1").map_err(|e| e.to_string())?;
/// let input = json!({ "id": "a/b" }).as_object().cloned().unwrap_or_default();
/// let request = compiled.request(&base, &input)?;
/// assert_eq!(request.url.as_str(), "https://api.example.com/v1/pets/a%2Fb");
/// # Ok::<(), String>(())
/// ```
#[derive(Debug)]
pub struct CompiledTemplate {
    method: Method,
    path: Vec<Piece>,
    /// The fixed query the template's path ends with.
    fixed_query: Vec<(String, String)>,
    query: Vec<QueryPlace>,
    headers: Vec<(String, HeaderName)>,
    body: Option<BodyPlace>,
    accept: Option<http::HeaderValue>,
    /// Every property the template places, so a property it does not place is refused.
    properties: HashSet<String>,
    /// A GraphQL request: the input becomes its variables.
    graphql: Option<GraphqlRequest>,
}

impl CompiledTemplate {
    /// Checks `template`.
    ///
    /// # Errors
    ///
    /// Every problem of the template, each as a sentence.
    pub fn new(template: &RequestTemplate) -> Result<Self, Vec<String>> {
        let mut problems = Vec::new();
        let method = Method::from_bytes(template.method.as_bytes())
            .ok()
            .filter(|method| method.as_str().bytes().all(|b| b.is_ascii_uppercase()))
            .unwrap_or_else(|| {
                problems.push(format!(
                    "the method {:?} is not an HTTP method in upper case",
                    template.method
                ));
                Method::GET
            });

        let mut properties = HashSet::new();
        let mut path_parameters = std::collections::HashMap::new();
        let mut reserved = HashSet::new();
        let mut query = Vec::new();
        let mut headers = Vec::new();
        for parameter in &template.parameters {
            if !properties.insert(parameter.property.clone()) {
                problems.push(format!(
                    "the property {:?} is placed twice",
                    parameter.property
                ));
            }
            if parameter.location != Location::Query && !parameter.style.is_form() {
                problems.push(format!(
                    "the {} parameter {:?} has the style {}, which only a query parameter takes",
                    parameter.location.as_str(),
                    parameter.name,
                    parameter.style.as_str()
                ));
            }
            if parameter.allow_reserved {
                if parameter.location == Location::Path {
                    reserved.insert(parameter.property.as_str());
                } else {
                    problems.push(format!(
                        "the {} parameter {:?} allows reserved characters, which only a path parameter does here",
                        parameter.location.as_str(),
                        parameter.name
                    ));
                }
            }
            match parameter.location {
                Location::Path => {
                    if path_parameters
                        .insert(parameter.name.as_str(), parameter.property.as_str())
                        .is_some()
                    {
                        problems.push(format!(
                            "the path parameter {:?} is given twice",
                            parameter.name
                        ));
                    }
                }
                Location::Query => {
                    query.push(QueryPlace {
                        property: parameter.property.clone(),
                        name: parameter.name.clone(),
                        style: parameter.style,
                        joined: parameter.joined,
                    });
                }
                Location::Header => match HeaderName::from_bytes(parameter.name.as_bytes()) {
                    Ok(name) if RESERVED_HEADERS.contains(&name.as_str()) => {
                        problems.push(format!(
                            "the header {:?} is the client's or HTTP's to set, not a parameter's",
                            parameter.name
                        ))
                    }
                    Ok(name) => headers.push((parameter.property.clone(), name)),
                    Err(_) => problems.push(format!("{:?} is not a header name", parameter.name)),
                },
            }
        }
        let body = template.body.as_ref().map(|body| {
            if !properties.insert(body.property.clone()) {
                problems.push(format!("the property {:?} is placed twice", body.property));
            }
            if body.encoding != BodyEncoding::Form && !body.deep_objects.is_empty() {
                problems.push("only a form body has deepObject fields".to_owned());
            }
            BodyPlace {
                property: body.property.clone(),
                encoding: body.encoding,
                deep_objects: body.deep_objects.iter().cloned().collect(),
            }
        });

        let (path, fixed_query) = match template.path.split_once('?') {
            Some((path, fixed)) => {
                if fixed.contains(['{', '}', '#']) {
                    problems.push(format!(
                        "the fixed query of {:?} holds a {{name}} or a fragment",
                        template.path
                    ));
                }
                let pairs = form_urlencoded::parse(fixed.as_bytes())
                    .into_owned()
                    .collect();
                (path, pairs)
            }
            None => (template.path.as_str(), Vec::new()),
        };
        let path = parse_path(path, &path_parameters, &reserved, &mut problems);
        if let Some(graphql) = &template.graphql {
            if method != Method::POST {
                problems.push("a GraphQL request is a POST".to_owned());
            }
            if !template.parameters.is_empty() || template.body.is_some() {
                problems.push(
                    "a GraphQL request takes its input as variables: no parameters, no body"
                        .to_owned(),
                );
            }
            if graphql.query.trim().is_empty() || graphql.operation_name.is_empty() {
                problems.push("a GraphQL request needs a query and an operation name".to_owned());
            }
        }
        let accept = template.accept.as_ref().and_then(|accept| {
            http::HeaderValue::from_str(accept)
                .map_err(|_| problems.push(format!("{accept:?} is no Accept header value")))
                .ok()
        });
        if problems.is_empty() {
            Ok(Self {
                method,
                path,
                fixed_query,
                query,
                headers,
                body,
                accept,
                properties,
                graphql: template.graphql.clone(),
            })
        } else {
            Err(problems)
        }
    }
}

// The check lives beside the compilation it runs, so that operations never import templates.
impl RequestTemplate {
    /// Checks the template as a source does when it is built: a method that is a token in
    /// upper case, a path that starts with `/` and has no fragment or dot segment, a `{name}`
    /// for every path parameter and a path parameter for every `{name}`, header names that are
    /// names and not the client's or HTTP's own, every property placed once.
    ///
    /// # Errors
    ///
    /// Every problem, each as a sentence.
    ///
    /// # Examples
    ///
    /// ```
    /// use toolkit_openapi::operations::{Location, RequestTemplate};
    ///
    /// let good = RequestTemplate::new("GET", "/pets/{petId}").parameter("id", Location::Path, "petId");
    /// assert!(good.check().is_ok());
    /// let bad = RequestTemplate::new("GET", "/pets/{petId}").parameter("auth", Location::Header, "Authorization");
    /// assert_eq!(bad.check().unwrap_err().len(), 2);
    /// ```
    pub fn check(&self) -> Result<(), Vec<String>> {
        CompiledTemplate::new(self).map(drop)
    }
}

/// Filling a checked template: what an HTTP source does on every call.
mod fill {
    use http::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
    use http::{HeaderMap, Method};
    use serde_json::Value;
    use toolkit_core::JsonObject;
    use url::Url;

    use std::collections::HashSet;

    use super::{BodyEncoding, CompiledTemplate, Piece};
    use crate::operations::encoding;

    /// The request of one call, filled from a [`CompiledTemplate`]: what an HTTP client sends.
    #[derive(Clone, Debug)]
    #[non_exhaustive]
    pub struct FilledRequest {
        /// The template's method.
        pub method: Method,
        /// The base URL with the filled path and query (and no fragment).
        pub url: Url,
        /// `Accept`, the header parameters the input gave, and `Content-Type` with a body.
        pub headers: HeaderMap,
        /// The encoded body (JSON or a form), when the input gave one.
        pub body: Option<Vec<u8>>,
    }

    impl CompiledTemplate {
        /// The request for `input`, below `base` (a URL whose path does not end with `/`).
        ///
        /// # Errors
        ///
        /// A message for the model when the input does not fit the places the template has for it.
        pub fn request(&self, base: &Url, input: &JsonObject) -> Result<FilledRequest, String> {
            if self.graphql.is_some() {
                return self.graphql_request(base, input);
            }
            if let Some(unknown) = input.keys().find(|key| !self.properties.contains(*key)) {
                return Err(format!("The operation takes no property {unknown:?}."));
            }
            let present = |property: &str| input.get(property).filter(|value| !value.is_null());

            let mut path = base.path().trim_end_matches('/').to_owned();
            for piece in &self.path {
                match piece {
                    Piece::Literal(text) => path.push_str(text),
                    Piece::Value(property) => {
                        let value = present(property).ok_or_else(|| {
                            format!("Give the property {property:?}: the path needs it.")
                        })?;
                        path.push_str(&encoding::path_segment(property, value)?);
                    }
                    Piece::Reserved(property) => {
                        let value = present(property).ok_or_else(|| {
                            format!("Give the property {property:?}: the path needs it.")
                        })?;
                        path.push_str(&encoding::reserved_path(property, value)?);
                    }
                }
            }
            let mut url = base.clone();
            url.set_path(&path);
            // Every value was encoded, so the URL keeps the path exactly; this guards the rule that
            // nothing the model wrote changes the path's shape against any normalization.
            if url.path() != path {
                return Err("A path value would change the path of the request.".to_owned());
            }
            url.set_fragment(None);
            // The query is written here rather than by `url`'s form serializer, so that a style's
            // delimiters and brackets stay as OpenAPI writes them while every text the model gave
            // is percent-encoded whole (see `encoding`).
            let mut pairs: Vec<(String, String)> = self
                .fixed_query
                .iter()
                .map(|(name, value)| (encoding::query_text(name), encoding::query_text(value)))
                .collect();
            for place in &self.query {
                if let Some(value) = present(&place.property) {
                    pairs.extend(encoding::query_pairs(
                        &place.property,
                        &place.name,
                        value,
                        place.style,
                        place.joined,
                    )?);
                }
            }
            if !pairs.is_empty() {
                url.set_query(Some(&join_pairs(&pairs)));
            }

            let mut request = FilledRequest {
                method: self.method.clone(),
                url,
                headers: HeaderMap::new(),
                body: None,
            };
            if let Some(accept) = &self.accept {
                request.headers.insert(ACCEPT, accept.clone());
            }
            for (property, name) in &self.headers {
                if let Some(value) = present(property) {
                    let text = encoding::header_value(property, value)?;
                    let value = HeaderValue::from_str(&text).map_err(|_| {
                        format!("The property {property:?} cannot be sent in a header.")
                    })?;
                    request.headers.append(name.clone(), value);
                }
            }
            if let Some(body) = &self.body
                && let Some(value) = input.get(&body.property)
            {
                let (content_type, bytes) = match body.encoding {
                    BodyEncoding::Json => ("application/json", json_body(value)),
                    BodyEncoding::Form => (
                        "application/x-www-form-urlencoded",
                        form_body(&body.property, value, &body.deep_objects)?,
                    ),
                };
                request
                    .headers
                    .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
                request.body = Some(bytes);
            }
            Ok(request)
        }
    }

    impl CompiledTemplate {
        /// Whether the template is a GraphQL request, whose answer is read as GraphQL's.
        pub fn is_graphql(&self) -> bool {
            self.graphql.is_some()
        }

        /// A GraphQL request: the fixed query (or the one with the model's selection set), its
        /// operation's name, and every other property of the input as a variable.
        fn graphql_request(&self, base: &Url, input: &JsonObject) -> Result<FilledRequest, String> {
            let Some(graphql) = &self.graphql else {
                return Err("The operation is no GraphQL request.".to_owned());
            };
            let selection_property = graphql
                .selection
                .as_ref()
                .map(|place| place.property.as_str());
            let selection = match selection_property.and_then(|property| input.get(property)) {
                None | Some(Value::Null) => None,
                Some(Value::String(text)) => Some(text.as_str()),
                Some(_) => {
                    return Err(format!(
                        "The property {:?} takes a selection set as text.",
                        selection_property.unwrap_or_default()
                    ));
                }
            };
            let query = graphql.query_for(selection)?;
            let variables: serde_json::Map<String, Value> = input
                .iter()
                .filter(|(key, _)| Some(key.as_str()) != selection_property)
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            let body = serde_json::json!({
                "query": query,
                "operationName": graphql.operation_name,
                "variables": variables,
            });
            let mut url = base.clone();
            let below: String = self
                .path
                .iter()
                .map(|piece| match piece {
                    Piece::Literal(text) => text.as_str(),
                    // A GraphQL template has no parameters (checked when compiled).
                    Piece::Value(_) | Piece::Reserved(_) => "",
                })
                .collect();
            // The path `/` is the base URL itself, which is most often the endpoint
            // (`https://api.github.com/graphql`).
            if below != "/" {
                url.set_path(&format!("{}{below}", base.path().trim_end_matches('/')));
            }
            url.set_fragment(None);
            if !self.fixed_query.is_empty() {
                let pairs: Vec<(String, String)> = self
                    .fixed_query
                    .iter()
                    .map(|(name, value)| (encoding::query_text(name), encoding::query_text(value)))
                    .collect();
                url.set_query(Some(&join_pairs(&pairs)));
            }
            let mut headers = HeaderMap::new();
            headers.insert(
                ACCEPT,
                self.accept.clone().unwrap_or(HeaderValue::from_static(
                    "application/graphql-response+json, application/json;q=0.9",
                )),
            );
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            Ok(FilledRequest {
                method: self.method.clone(),
                url,
                headers,
                body: Some(json_body(&body)),
            })
        }
    }

    fn json_body(value: &Value) -> Vec<u8> {
        // A `Value` always serializes.
        serde_json::to_vec(value).unwrap_or_default()
    }

    /// A form body: each field of the object as `key=value`, a list as a key per item, a field
    /// of `deep_objects` as a `deepObject` (`field[key]=value`).
    fn form_body(
        property: &str,
        value: &Value,
        deep_objects: &HashSet<String>,
    ) -> Result<Vec<u8>, String> {
        let Value::Object(fields) = value else {
            return Err(format!(
                "The property {property:?} takes an object of form fields."
            ));
        };
        let mut pairs = Vec::new();
        for (key, value) in fields {
            if value.is_null() {
                continue;
            }
            let field = format!("{property}.{key}");
            if deep_objects.contains(key) {
                encoding::deep_object(&field, encoding::query_text(key), value, 0, &mut pairs)?;
            } else {
                for text in encoding::scalars(&field, value)? {
                    pairs.push((encoding::query_text(key), encoding::query_text(&text)));
                }
            }
        }
        Ok(join_pairs(&pairs).into_bytes())
    }

    /// Encoded pairs as `key=value&key=value`.
    fn join_pairs(pairs: &[(String, String)]) -> String {
        let mut text = String::new();
        for (key, value) in pairs {
            if !text.is_empty() {
                text.push('&');
            }
            text.push_str(key);
            text.push('=');
            text.push_str(value);
        }
        text
    }
}

pub use fill::FilledRequest;

/// The pieces of `path`, each `{name}` resolved to its property.
fn parse_path(
    path: &str,
    parameters: &std::collections::HashMap<&str, &str>,
    reserved: &HashSet<&str>,
    problems: &mut Vec<String>,
) -> Vec<Piece> {
    if !path.starts_with('/') {
        problems.push(format!("the path {path:?} does not start with /"));
    }
    if path.contains('#') {
        problems.push(format!("the path {path:?} holds a fragment"));
    }
    if path
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        problems.push(format!("the path {path:?} holds a . or .. segment"));
    }
    let mut pieces = Vec::new();
    let mut used = HashSet::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let literal = &rest[..open];
        let Some(close) = rest[open..].find('}').map(|close| open + close) else {
            problems.push(format!("the path {path:?} has a {{ that is never closed"));
            break;
        };
        let name = &rest[open + 1..close];
        if literal.contains('}') {
            problems.push(format!("the path {path:?} has a }} that was never opened"));
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(
                utf8_percent_encode(literal, PATH_LITERAL).to_string(),
            ));
        }
        match parameters.get(name) {
            Some(property) => {
                used.insert(name);
                pieces.push(if reserved.contains(property) {
                    Piece::Reserved((*property).to_owned())
                } else {
                    Piece::Value((*property).to_owned())
                });
            }
            None => problems.push(format!("the path's {{{name}}} is no path parameter")),
        }
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        problems.push(format!("the path {path:?} has a }} that was never opened"));
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(
            utf8_percent_encode(rest, PATH_LITERAL).to_string(),
        ));
    }
    for name in parameters.keys() {
        if !used.contains(name) {
            problems.push(format!(
                "the path parameter {name:?} has no {{{name}}} in the path"
            ));
        }
    }
    pieces
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::{Value, json};
    use url::Url;

    use super::*;
    use crate::operations::RequestTemplate;
    use toolkit_core::JsonObject;

    fn compile(template: RequestTemplate) -> CompiledTemplate {
        match CompiledTemplate::new(&template) {
            Ok(compiled) => compiled,
            Err(problems) => panic!("{problems:?}"),
        }
    }

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn templates_that_do_not_fit_their_parameters_are_refused() {
        let cases = [
            RequestTemplate::new("GET", "/pets/{id}"),
            RequestTemplate::new("GET", "/pets").parameter("id", Location::Path, "id"),
            RequestTemplate::new("get", "/pets"),
            RequestTemplate::new("GET", "pets"),
            RequestTemplate::new("GET", "/pets#x"),
            RequestTemplate::new("GET", "/pets?x={id}").parameter("id", Location::Query, "id"),
            RequestTemplate::new("GET", "/a/../b"),
            RequestTemplate::new("GET", "/pets/{id").parameter("id", Location::Path, "id"),
            RequestTemplate::new("GET", "/p").parameter("a", Location::Header, "Authorization"),
            RequestTemplate::new("GET", "/p").parameter("a", Location::Header, "bad header"),
            RequestTemplate::new("GET", "/p")
                .parameter("a", Location::Query, "a")
                .parameter("a", Location::Query, "b"),
        ];
        for template in cases {
            assert!(CompiledTemplate::new(&template).is_err(), "{template:?}");
        }
    }

    #[test]
    fn a_graphql_template_sends_its_query_and_the_input_as_variables() {
        use crate::operations::{GraphqlRequest, GraphqlSelection};
        let mut request = GraphqlRequest::new(
            "query user($login: String!) { user(login: $login) { name } }",
            "user",
        );
        request.selection = Some(GraphqlSelection {
            property: "selection".into(),
            before: "query user($login: String!) { user(login: $login) {".into(),
            after: "} }".into(),
        });
        let compiled = compile(RequestTemplate::graphql("/", request.clone()));
        let base = Url::parse("http://127.0.0.1:9/graphql").unwrap();
        let filled = compiled
            .request(&base, &object(json!({"login": "octo"})))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(filled.method, http::Method::POST);
        assert_eq!(filled.url.as_str(), "http://127.0.0.1:9/graphql");
        assert_eq!(filled.headers["content-type"], "application/json");
        let body: Value = serde_json::from_slice(&filled.body.unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"query": request.query, "operationName": "user", "variables": {"login": "octo"}})
        );
        let chosen = compiled
            .request(
                &base,
                &object(json!({"login": "octo", "selection": "{ name id }"})),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let body: Value = serde_json::from_slice(&chosen.body.unwrap()).unwrap();
        assert_eq!(
            body["query"],
            "query user($login: String!) { user(login: $login) { name id } }"
        );
        assert_eq!(body["variables"], json!({"login": "octo"}));
        for selection in [json!("name } }"), json!(3)] {
            assert!(
                compiled
                    .request(&base, &object(json!({"selection": selection})))
                    .is_err()
            );
        }
        // A GraphQL request is a POST of its own body, with no parameters.
        let mut get = RequestTemplate::graphql("/", request.clone());
        get.method = "GET".into();
        assert!(CompiledTemplate::new(&get).is_err());
        let with_parameter =
            RequestTemplate::graphql("/", request).parameter("a", Location::Query, "a");
        assert!(CompiledTemplate::new(&with_parameter).is_err());
        // Nothing changes in how other templates serialize.
        let plain = serde_json::to_value(RequestTemplate::new("GET", "/a")).unwrap();
        assert_eq!(plain, json!({"method": "GET", "path": "/a"}));
    }

    #[test]
    fn a_request_fills_only_the_places_of_the_template() {
        let compiled = compile(
            RequestTemplate::new("POST", "/v1/files/{name}.{ext}?beta=true")
                .parameter("name", Location::Path, "name")
                .parameter("ext", Location::Path, "ext")
                .parameter("tag", Location::Query, "tag")
                .joined_query("fields", "fields")
                .parameter("trace", Location::Header, "X-Trace")
                .body("body", BodyEncoding::Json),
        );
        let base = Url::parse("http://127.0.0.1:9/api/").unwrap_or_else(|e| panic!("{e}"));
        let request = compiled
            .request(
                &base,
                &object(json!({
                    "name": "a b", "ext": "txt", "tag": ["x&y=1", "#z"], "trace": [1, 2],
                    "fields": ["a", "b"],
                    "body": {"k": 1}
                })),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            request.url.as_str(),
            "http://127.0.0.1:9/api/v1/files/a%20b.txt?beta=true&tag=x%26y%3D1&tag=%23z&fields=a,b"
        );
        assert_eq!(request.headers["x-trace"], "1,2");
        assert_eq!(request.headers["content-type"], "application/json");
        let refused =
            compiled.request(&base, &object(json!({"name": "a", "ext": "b", "other": 1})));
        assert_eq!(
            refused.err().as_deref(),
            Some("The operation takes no property \"other\".")
        );
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod properties {
    use percent_encoding::percent_decode_str;
    use proptest::prelude::*;
    use serde_json::json;
    use url::Url;

    use super::*;
    use crate::operations::RequestTemplate;

    fn template() -> CompiledTemplate {
        CompiledTemplate::new(
            &RequestTemplate::new("GET", "/items/{id}/notes")
                .parameter("id", Location::Path, "id")
                .parameter("tag", Location::Query, "tag")
                .parameter("trace", Location::Header, "X-Trace"),
        )
        .unwrap()
    }

    proptest! {
        /// Whatever the model writes, the request stays on the base URL's host, its path keeps
        /// its four segments, and the value is the one segment it fills.
        #[test]
        fn no_path_value_changes_the_path_or_the_host(
            value in prop_oneof![any::<String>(), "[./%2eEfF\\\\a?#]{0,9}"],
        ) {
            let base = Url::parse("https://api.example.com/api").unwrap();
            let input = json!({ "id": value.clone() }).as_object().cloned().unwrap();
            if let Ok(request) = template().request(&base, &input) {
                let url = &request.url;
                prop_assert_eq!(url.origin(), base.origin());
                let segments: Vec<&str> = url.path_segments().unwrap().collect();
                prop_assert_eq!(segments.len(), 4);
                prop_assert_eq!(segments[0], "api");
                prop_assert_eq!(segments[1], "items");
                prop_assert_eq!(segments[3], "notes");
                prop_assert_eq!(percent_decode_str(segments[2]).decode_utf8().unwrap(), value.as_str());
                prop_assert!(url.query().is_none() && url.fragment().is_none());
            }
        }

        /// Every query value reaches its own key, whole, and adds no other key.
        #[test]
        fn query_values_stay_under_their_key(values in proptest::collection::vec(any::<String>(), 1..4)) {
            let base = Url::parse("https://api.example.com/").unwrap();
            let input = json!({ "id": "1", "tag": values.clone() }).as_object().cloned().unwrap();
            let request = template().request(&base, &input).unwrap();
            let pairs: Vec<(String, String)> = request.url.query_pairs().into_owned().collect();
            let expected: Vec<(String, String)> = values.iter().map(|v| ("tag".to_owned(), v.clone())).collect();
            prop_assert_eq!(pairs, expected);
        }

        /// A header value is sent as it is or refused; never one that could end the header.
        #[test]
        fn header_values_are_sent_whole_or_refused(value in any::<String>()) {
            let base = Url::parse("https://api.example.com/").unwrap();
            let input = json!({ "id": "1", "trace": value.clone() }).as_object().cloned().unwrap();
            match template().request(&base, &input) {
                Ok(request) => {
                    prop_assert_eq!(request.headers.len(), 1);
                    prop_assert_eq!(request.headers["x-trace"].to_str().unwrap(), value.as_str());
                    prop_assert!(!value.contains(['\r', '\n', '\0']));
                }
                Err(_) => prop_assert!(value.chars().any(|c| c.is_control() || !c.is_ascii())),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod reserved_expansion {
    use percent_encoding::percent_decode_str;
    use proptest::prelude::*;
    use serde_json::json;
    use url::Url;

    use super::*;
    use crate::operations::RequestTemplate;

    fn template() -> CompiledTemplate {
        CompiledTemplate::new(
            &RequestTemplate::new("POST", "/v1/{name}:publish")
                .reserved_path("name", "name")
                .parameter("fields", Location::Query, "fields"),
        )
        .unwrap()
    }

    fn fill(value: serde_json::Value) -> Result<Url, String> {
        let base = Url::parse("https://pubsub.googleapis.com/").unwrap();
        let input = json!({ "name": value }).as_object().cloned().unwrap();
        template().request(&base, &input).map(|request| request.url)
    }

    #[test]
    fn a_resource_name_fills_its_segments_with_its_slashes_kept() {
        let url = fill(json!("projects/p-1/topics/t_2.x~y")).unwrap();
        assert_eq!(
            url.as_str(),
            "https://pubsub.googleapis.com/v1/projects/p-1/topics/t_2.x~y:publish"
        );
        // Sub-delimiters, `:` and `@` stay as they are; the rest is encoded, `%` too.
        let url = fill(json!("a:b@c/d,e;f=g+h!$&'()*/sp ce/pc%2F..%2Fx/é[]")).unwrap();
        assert_eq!(
            url.path(),
            "/v1/a:b@c/d,e;f=g+h!$&'()*/sp%20ce/pc%252F..%252Fx/%C3%A9%5B%5D:publish"
        );
        assert!(url.query().is_none());
    }

    #[test]
    fn no_value_escapes_its_segments() {
        for bad in [
            "..",
            ".",
            "../admin",
            "projects/../../admin",
            "projects/./x",
            "projects/..",
            "/etc/passwd",
            "projects/p/",
            "projects//p",
            "",
            "a?alt=media",
            "a#frag",
            "a\\..\\b",
            "..\\x",
        ] {
            let refused = fill(json!(bad));
            assert!(refused.is_err(), "{bad:?} was sent as {refused:?}");
        }
        assert!(fill(json!(["a", "b"])).is_err());
        assert!(fill(json!({"a": "b"})).is_err());
        assert!(fill(json!(null)).is_err());
        // Another host: a scheme or authority in the value stays path text.
        let url = fill(json!("https://evil.example/x")).unwrap_err();
        assert!(url.contains("empty"), "{url}");
        let url = fill(json!("evil.example:443@x/y")).unwrap();
        assert_eq!(url.host_str(), Some("pubsub.googleapis.com"));
        assert_eq!(url.path(), "/v1/evil.example:443@x/y:publish");
        // A number fills a segment as its text.
        assert_eq!(fill(json!(12)).unwrap().path(), "/v1/12:publish");
    }

    #[test]
    fn only_a_path_parameter_takes_reserved_expansion() {
        let mut template = RequestTemplate::new("GET", "/x").parameter("q", Location::Query, "q");
        template.parameters[0].allow_reserved = true;
        let problems = CompiledTemplate::new(&template).unwrap_err();
        assert!(
            problems[0].contains("only a path parameter"),
            "{problems:?}"
        );
    }

    #[test]
    fn the_flag_is_serialized_only_when_set() {
        let template = RequestTemplate::new("GET", "/v1/{name}/{id}")
            .reserved_path("name", "name")
            .parameter("id", Location::Path, "id");
        let value = serde_json::to_value(&template).unwrap();
        assert_eq!(
            value["parameters"],
            json!([
                {"property": "name", "in": "path", "name": "name", "allowReserved": true},
                {"property": "id", "in": "path", "name": "id"}
            ])
        );
        let back: RequestTemplate = serde_json::from_value(value).unwrap();
        assert_eq!(back, template);
    }

    proptest! {
        /// Whatever the model writes, the request stays on the host, the template's own
        /// segments stay in place, the value's segments are its own (decoded, joined by `/`,
        /// the value), and there is no query or fragment.
        #[test]
        fn no_reserved_value_changes_the_path_or_the_host(
            value in prop_oneof![any::<String>(), "[./%2eEfF\\\\a?#:@]{0,12}", "([a-z.]{1,3}/){0,4}[a-z.%]{0,3}"],
        ) {
            let base = Url::parse("https://api.example.com/api").unwrap();
            let input = json!({ "name": value.clone() }).as_object().cloned().unwrap();
            let compiled = CompiledTemplate::new(
                &RequestTemplate::new("GET", "/items/{name}/notes").reserved_path("name", "name"),
            )
            .unwrap();
            if let Ok(request) = compiled.request(&base, &input) {
                let url = &request.url;
                prop_assert_eq!(url.origin(), base.origin());
                let segments: Vec<&str> = url.path_segments().unwrap().collect();
                let count = value.split('/').count();
                prop_assert_eq!(segments.len(), 3 + count);
                prop_assert_eq!(segments[0], "api");
                prop_assert_eq!(segments[1], "items");
                prop_assert_eq!(segments[2 + count], "notes");
                let filled: Vec<String> = segments[2..2 + count]
                    .iter()
                    .map(|segment| percent_decode_str(segment).decode_utf8().unwrap().into_owned())
                    .collect();
                prop_assert_eq!(filled.join("/"), value.clone());
                for segment in &filled {
                    prop_assert!(!segment.is_empty() && segment != "." && segment != "..");
                }
                prop_assert!(url.query().is_none() && url.fragment().is_none());
            }
        }
    }
}
