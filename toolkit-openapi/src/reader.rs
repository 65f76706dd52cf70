//! Reading the operations of an OpenAPI 3 document: [`read_openapi`].

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use super::answer;
use super::defs::{Defs, Gathered};
use super::naming::{self, BODY};
use super::pointer::{self, location};
use super::schema::SchemaDialect;
use super::security::{self, CredentialParameter};
use super::visibility::Direction;
use super::{NotOpenApi, ReadOperations, ReadOptions, Server, SkipReason, Skipped};
use crate::operations::CompiledTemplate;
use crate::operations::{
    BodyEncoding, KeyLocation, Location, Operation, QueryStyle, RequestTemplate,
    SecurityRequirement,
};
use toolkit_core::{Annotations, ToolDefinition};

/// The methods of a path item, in the order the reader takes them (`query` is OpenAPI 3.2's;
/// any other method is one of the item's `additionalOperations`).
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace", "query",
];

/// Reads the operations of an OpenAPI 3.0.x, 3.1.x or 3.2.x document (what
/// [`read_operations`](crate::read_operations) reads once a Swagger 2.0 or Discovery document is
/// converted to one).
///
/// # Errors
///
/// [`NotOpenApi`] when the document is no OpenAPI 3 document.
pub(crate) fn read_openapi(
    document: &Value,
    options: &ReadOptions,
) -> Result<ReadOperations, NotOpenApi> {
    let dialect = dialect(document)?;
    let mut reader = Reader {
        document,
        options,
        defs: Defs::new(document, dialect, options),
        names: HashMap::new(),
        read: ReadOperations::default(),
        document_security: security::requirements(document.get("security")).unwrap_or_default(),
        requirements: Vec::new(),
        operation_name: String::new(),
        credentials: Vec::new(),
        required_schemes: Vec::new(),
    };
    reader.read.servers = servers(document);
    reader.read.security.schemes = security::schemes(document, &mut reader.read.security.problems);
    match document.get("paths") {
        None | Some(Value::Null) => {}
        Some(Value::Object(paths)) => {
            for (path, item) in paths {
                if !path.starts_with("x-") {
                    reader.path(path, item);
                }
            }
        }
        Some(_) => {
            reader.read.skipped.push(Skipped {
                location: "#/paths".to_owned(),
                method: String::new(),
                path: String::new(),
                reason: SkipReason::malformed("`paths` is not an object"),
            });
        }
    }
    let mut read = reader.read;
    read.defs = reader.defs.into_shared();
    Ok(read)
}

/// The dialect of the document's schemas, from its `openapi` field.
fn dialect(document: &Value) -> Result<SchemaDialect, NotOpenApi> {
    if !document.is_object() {
        return Err(NotOpenApi::new("the document is not an object"));
    }
    let Some(version) = document.get("openapi") else {
        return Err(NotOpenApi::new(
            "the document has no `openapi` field: it is not OpenAPI 3",
        ));
    };
    let Some(version) = version.as_str() else {
        return Err(NotOpenApi::new("the `openapi` field is not a string"));
    };
    if version.starts_with("3.0") {
        Ok(SchemaDialect::V30)
    } else if version.starts_with("3.") {
        Ok(SchemaDialect::V31)
    } else {
        Err(NotOpenApi::new(format!(
            "OpenAPI {version} is not 3.0, 3.1 or 3.2"
        )))
    }
}

fn servers(document: &Value) -> Vec<Server> {
    document
        .get("servers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|server| {
            Some(Server {
                url: server.get("url")?.as_str()?.to_owned(),
                description: server
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
}

struct Reader<'d> {
    document: &'d Value,
    options: &'d ReadOptions,
    defs: Defs<'d>,
    /// Each name as a model reads it, and the location of the operation that has it.
    names: HashMap<String, String>,
    read: ReadOperations,
    /// The document's `security`.
    document_security: Vec<SecurityRequirement>,
    /// The requirements of the operation being read.
    requirements: Vec<SecurityRequirement>,
    /// Its name.
    operation_name: String,
    /// The credential parameters it left out so far.
    credentials: Vec<CredentialParameter>,
    /// The schemes of those of them the operation declares required.
    required_schemes: Vec<String>,
}

/// A parameter, read and checked.
struct Parameter {
    name: String,
    location: Location,
    required: bool,
    schema: Value,
    description: Option<Value>,
    deprecated: bool,
    /// A query parameter's style.
    style: QueryStyle,
    /// A query list sent as one value joined by commas.
    joined: bool,
}

impl<'d> Reader<'d> {
    fn path(&mut self, path: &str, item: &'d Value) {
        let item_location = location(["paths", path]);
        let item = match pointer::follow(self.document, item) {
            Ok(Value::Object(item)) => item,
            Ok(_) => {
                self.skip(
                    &item_location,
                    "",
                    path,
                    SkipReason::malformed("the path item is not an object"),
                );
                return;
            }
            Err(reason) => {
                self.skip(&item_location, "", path, reason);
                return;
            }
        };
        // Each operation, where it is, and why it is none when it is none.
        let mut operations: Vec<(String, String, &'d Value, Option<SkipReason>)> = METHODS
            .iter()
            .filter_map(|method| {
                let operation = item.get(*method)?;
                let at = location(["paths", path, method]);
                Some(((*method).to_owned(), at, operation, None))
            })
            .collect();
        // OpenAPI 3.2's `additionalOperations`: methods other than the fixed ones, named as the
        // wire has them (`COPY`, `LINK`); one of the fixed methods there is no operation.
        if let Some(Value::Object(additional)) = item.get("additionalOperations") {
            for (method, operation) in additional {
                let at = location(["paths", path, "additionalOperations", method]);
                let refused = METHODS
                    .contains(&method.to_ascii_lowercase().as_str())
                    .then(|| {
                        SkipReason::malformed(format!(
                            "`additionalOperations` names {method}, a method with a field of its own"
                        ))
                    });
                operations.push((method.clone(), at, operation, refused));
            }
        }
        for (method, at, operation, refused) in operations {
            let method = method.as_str();
            if let Some(reason) = refused {
                self.skip(&at, method, path, reason);
                continue;
            }
            if !self.options.deprecated && operation.get("deprecated") == Some(&Value::Bool(true)) {
                continue;
            }
            self.credentials.clear();
            self.required_schemes.clear();
            match self.operation(path, method, item, operation, &at) {
                Ok(operation) => {
                    let required = std::mem::take(&mut self.required_schemes);
                    with_required(&mut self.requirements, &required);
                    if !self.requirements.is_empty() {
                        self.read.security.requirements.insert(
                            operation.name().to_owned(),
                            std::mem::take(&mut self.requirements),
                        );
                    }
                    let credentials = std::mem::take(&mut self.credentials);
                    self.read.security.credential_parameters.extend(credentials);
                    self.read.operations.push(operation);
                }
                Err(reason) => self.skip(&at, method, path, reason),
            }
        }
    }

    fn skip(&mut self, at: &str, method: &str, path: &str, reason: SkipReason) {
        self.read.skipped.push(Skipped {
            location: at.to_owned(),
            method: method.to_ascii_uppercase(),
            path: path.to_owned(),
            reason,
        });
    }

    fn operation(
        &mut self,
        path: &str,
        method: &str,
        item: &'d Map<String, Value>,
        operation: &'d Value,
        at: &str,
    ) -> Result<Operation, SkipReason> {
        let Value::Object(operation) = operation else {
            return Err(SkipReason::malformed("the operation is not an object"));
        };
        let name = match operation.get("operationId").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => naming::operation_name(method, path),
        };
        let read_name = naming::as_model_reads(&name);
        if let Some(taken_by) = self.names.get(&read_name) {
            return Err(SkipReason::DuplicateName {
                name,
                taken_by: taken_by.clone(),
            });
        }
        self.requirements = security::requirements(operation.get("security"))
            .unwrap_or_else(|| self.document_security.clone());
        self.operation_name = name.clone();

        // A fragment is never sent: documents use one to tell operations of one path apart
        // (`/files/{id}#get_shared_link`). A fixed query (`/responses?beta=true`) is kept.
        let sent = path.split_once('#').map_or(path, |(sent, _)| sent);
        let parameters = self.parameters(item.get("parameters"), operation.get("parameters"))?;
        check_path(sent, &parameters)?;
        let body = match operation.get("requestBody") {
            Some(body) => Some(self.body(body)?),
            None => None,
        };
        // The extension on the request body itself (where converters also write it).
        let body_extension = operation
            .get("requestBody")
            .and_then(|body| pointer::follow(self.document, body).ok())
            .and_then(|body| body.get(naming::BODY_NAME));

        let mut refs = Vec::new();
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut template = RequestTemplate::new(method.to_ascii_uppercase(), sent);
        let wire: Vec<(Location, &str)> = parameters
            .iter()
            .map(|parameter| (parameter.location, parameter.name.as_str()))
            .collect();
        for (parameter, property) in parameters.iter().zip(naming::property_names(&wire)) {
            let mut schema = self.defs.convert(&parameter.schema, &mut refs)?;
            describe(&mut schema, parameter, &property);
            if parameter.required {
                required.push(Value::String(property.clone()));
            }
            template = if !parameter.style.is_form() {
                template.styled_query(property.clone(), parameter.name.clone(), parameter.style)
            } else if parameter.joined {
                template.joined_query(property.clone(), parameter.name.clone())
            } else {
                template.parameter(property.clone(), parameter.location, parameter.name.clone())
            };
            properties.insert(property, schema);
        }
        if let Some(RequestBody {
            schema,
            encoding,
            deep_objects,
            required: body_required,
            description,
        }) = body
        {
            let mut schema = self.defs.convert(schema, &mut refs)?;
            if let (Some(description), Value::Object(object)) = (description, &mut schema)
                && !object.contains_key("description")
            {
                object.insert("description".to_owned(), description.clone());
            }
            // A body named by `x-codegen-request-body-name` (as converters from Swagger 2.0,
            // ours included, keep the 2.0 body parameter's name) when no parameter has it.
            let property = operation
                .get(naming::BODY_NAME)
                .or(body_extension)
                .and_then(Value::as_str)
                .map(naming::in_charset)
                .filter(|name| !properties.contains_key(name))
                .unwrap_or_else(|| BODY.to_owned());
            if body_required {
                required.push(Value::String(property.clone()));
            }
            template = if deep_objects.is_empty() {
                template.body(property.clone(), encoding)
            } else {
                template.form_body(property.clone(), deep_objects)
            };
            properties.insert(property, schema);
        }
        if let Some(accept) = answer::accept(self.document, operation.get("responses")) {
            template = template.accept(accept);
        }
        // The source checks every template it is given; one it would refuse (a header name that
        // is no name or is HTTP's to set, a path with a stray brace) is no tool.
        if let Err(problems) = CompiledTemplate::new(&template) {
            return Err(SkipReason::malformed(problems.join("; ")));
        }
        // A request never carries a `readOnly` property (see `visibility`).
        let Gathered { defs, directed } = self.defs.gather(refs, Direction::Request)?;
        properties
            .values_mut()
            .for_each(|schema| directed.apply(schema));

        let mut input = Map::new();
        input.insert("type".to_owned(), json!("object"));
        input.insert("properties".to_owned(), Value::Object(properties));
        if !required.is_empty() {
            input.insert("required".to_owned(), Value::Array(required));
        }
        input.insert("additionalProperties".to_owned(), Value::Bool(false));
        if let Some(defs) = defs {
            input.insert("$defs".to_owned(), defs);
        }

        let text = |key: &str| {
            operation
                .get(key)
                .or_else(|| item.get(key))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|text| !text.is_empty())
        };
        let mut definition = ToolDefinition::new(name.clone(), input)
            .map_err(|error| SkipReason::malformed(error.to_string()))?
            .with_annotations(hints(method, text("summary")));
        if let Some(description) = text("description").or_else(|| text("summary")) {
            definition = definition.with_description(description);
        }
        if let Some(answer) = self
            .options
            .answers
            .then(|| self.answer(operation.get("responses")))
            .flatten()
        {
            let shared = |name: &str| self.defs.shared_entry(name);
            if let Some(output) = output_schema(&answer, shared) {
                definition = definition.with_output_schema(output);
            }
            self.read.answers.insert(name, answer);
        }
        self.names.insert(read_name, at.to_owned());
        Ok(Operation::new(definition, template))
    }

    /// The schema of the operation's success answer (see [`answer`](super::answer)), standing
    /// alone with its `$defs`; `None` when there is none or it cannot be read (an external
    /// reference): the operation is a tool all the same.
    fn answer(&mut self, responses: Option<&'d Value>) -> Option<Map<String, Value>> {
        let schema = answer::success_schema(self.document, responses)?;
        let mut refs = Vec::new();
        let mut converted = self.defs.convert(&schema, &mut refs).ok()?;
        // An answer never carries a `writeOnly` property.
        let Gathered { defs, directed } = self.defs.gather(refs, Direction::Answer).ok()?;
        directed.apply(&mut converted);
        let mut answer = match converted {
            Value::Object(object) => object,
            Value::Bool(true) => Map::new(),
            _ => return None,
        };
        if let Some(defs) = defs {
            answer.insert("$defs".to_owned(), defs);
        }
        Some(answer)
    }

    /// The parameters of the path item and the operation (the operation's win over the path
    /// item's of the same name and place), checked.
    fn parameters(
        &mut self,
        of_item: Option<&'d Value>,
        of_operation: Option<&'d Value>,
    ) -> Result<Vec<Parameter>, SkipReason> {
        let mut read: Vec<Parameter> = Vec::new();
        for list in [of_item, of_operation].into_iter().flatten() {
            let Value::Array(list) = list else {
                return Err(SkipReason::malformed("`parameters` is not a list"));
            };
            for parameter in list {
                let followed = pointer::follow(self.document, parameter)?;
                let parameters =
                    if followed.get("in").and_then(Value::as_str) == Some("querystring") {
                        self.querystring(followed)?
                    } else {
                        self.parameter(parameter)?.into_iter().collect()
                    };
                for parameter in parameters {
                    match read.iter_mut().find(|known| {
                        known.name == parameter.name && known.location == parameter.location
                    }) {
                        Some(known) => *known = parameter,
                        None => read.push(parameter),
                    }
                }
            }
        }
        Ok(read)
    }

    /// One parameter, or `None` for one the tool leaves out (an optional cookie, and the
    /// `Accept`, `Content-Type` and `Authorization` headers, which OpenAPI says to ignore).
    fn parameter(&mut self, parameter: &'d Value) -> Result<Option<Parameter>, SkipReason> {
        let parameter = pointer::follow(self.document, parameter)?;
        let field = |key: &str| parameter.get(key).and_then(Value::as_str);
        let (Some(name), Some(place)) = (field("name"), field("in")) else {
            return Err(SkipReason::malformed(
                "a parameter has no `name` or no `in`",
            ));
        };
        let required = parameter.get("required") == Some(&Value::Bool(true));
        let key_location = match place {
            "header" => Some(KeyLocation::Header),
            "query" => Some(KeyLocation::Query),
            "cookie" => Some(KeyLocation::Cookie),
            _ => None,
        };
        if let Some(key_location) = key_location
            && let Some(scheme) =
                security::carried_by(&self.read.security.schemes, name, key_location)
        {
            if required && !self.required_schemes.iter().any(|known| known == scheme) {
                self.required_schemes.push(scheme.to_owned());
            }
            self.credentials.push(CredentialParameter {
                operation: self.operation_name.clone(),
                parameter: name.to_owned(),
                location: key_location,
                scheme: scheme.to_owned(),
            });
            return Ok(None);
        }
        let location = match place {
            "path" => Location::Path,
            "query" => Location::Query,
            "header" => {
                if ["accept", "content-type", "authorization"]
                    .contains(&name.to_ascii_lowercase().as_str())
                {
                    return Ok(None);
                }
                Location::Header
            }
            "cookie" if required => {
                return Err(SkipReason::Cookie {
                    name: name.to_owned(),
                });
            }
            "cookie" => return Ok(None),
            other => {
                return Err(SkipReason::malformed(format!(
                    "the parameter {name:?} is in {other:?}, which is no place of a request"
                )));
            }
        };
        if parameter.get("content").is_some() {
            return Err(SkipReason::ParameterContent {
                name: name.to_owned(),
            });
        }
        let schema = parameter
            .get("schema")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let shape = self.shape(&schema)?;
        let style = field("style");
        let explode = parameter.get("explode").and_then(Value::as_bool);
        let refuse_style = |style: &str| {
            Err(SkipReason::ParameterStyle {
                name: name.to_owned(),
                style: style.to_owned(),
            })
        };
        // OpenAPI 3.1's styles of a query: `form` (explode by default), `spaceDelimited` and
        // `pipeDelimited` (joined by default; exploded, they are `form`'s key per item), and
        // `deepObject`. A path and a header take `simple` only, a path no list.
        let (style, joined) = match (location, style) {
            (Location::Query, None | Some("form")) => (QueryStyle::Form, explode == Some(false)),
            (Location::Query, Some(delimited @ ("spaceDelimited" | "pipeDelimited"))) => {
                if explode == Some(true) {
                    (QueryStyle::Form, false)
                } else if delimited == "spaceDelimited" {
                    (QueryStyle::SpaceDelimited, true)
                } else {
                    (QueryStyle::PipeDelimited, true)
                }
            }
            (Location::Query, Some("deepObject")) => {
                if explode == Some(false) {
                    return refuse_style("deepObject with explode: false");
                }
                (QueryStyle::DeepObject, false)
            }
            (_, None | Some("simple")) => (QueryStyle::Form, false),
            (_, Some(other)) => return refuse_style(other),
        };
        // A form's exploded object would spread the model's keys over the query; a list of
        // objects or lists has no joined form. A deepObject takes both, nested in brackets.
        if style != QueryStyle::DeepObject && ((shape.object && !joined) || shape.items_not_scalar)
        {
            return Err(SkipReason::ObjectParameter {
                name: name.to_owned(),
            });
        }
        if location == Location::Path && shape.array {
            return refuse_style("a list in the path");
        }
        Ok(Some(Parameter {
            name: name.to_owned(),
            location,
            required: required || location == Location::Path,
            schema,
            description: parameter.get("description").cloned(),
            deprecated: parameter.get("deprecated") == Some(&Value::Bool(true)),
            style,
            joined,
        }))
    }

    /// OpenAPI 3.2's `in: querystring` parameter, the whole query as one value: a form
    /// (`application/x-www-form-urlencoded`) of an object whose properties the schema lists is
    /// a query parameter per property (`form`, a key per list item); any other is skipped, as
    /// is an object open to keys it does not list (they would be the model's to choose).
    fn querystring(&mut self, parameter: &'d Value) -> Result<Vec<Parameter>, SkipReason> {
        let name = parameter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("querystring");
        let refuse = || SkipReason::ParameterContent {
            name: name.to_owned(),
        };
        let Some(Value::Object(content)) = parameter.get("content") else {
            return Err(refuse());
        };
        let mut media = content.iter();
        let (Some((media_type, media)), None) = (media.next(), media.next()) else {
            return Err(refuse());
        };
        let essence = media_type.split(';').next().unwrap_or_default().trim();
        if !essence.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
            return Err(refuse());
        }
        let schema = pointer::follow(self.document, media.get("schema").ok_or_else(refuse)?)?;
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return Err(refuse());
        };
        if !matches!(schema.get("additionalProperties"), Some(Value::Bool(false)))
            && schema.get("additionalProperties").is_some()
        {
            return Err(refuse());
        }
        let required_names: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let whole_required = parameter.get("required") == Some(&Value::Bool(true));
        let mut read = Vec::new();
        for (property, property_schema) in properties {
            let required = whole_required && required_names.contains(&property.as_str());
            if let Some(scheme) =
                security::carried_by(&self.read.security.schemes, property, KeyLocation::Query)
            {
                if required && !self.required_schemes.iter().any(|known| known == scheme) {
                    self.required_schemes.push(scheme.to_owned());
                }
                self.credentials.push(CredentialParameter {
                    operation: self.operation_name.clone(),
                    parameter: property.clone(),
                    location: KeyLocation::Query,
                    scheme: scheme.to_owned(),
                });
                continue;
            }
            let shape = self.shape(property_schema)?;
            if shape.object || shape.items_not_scalar {
                return Err(SkipReason::ObjectParameter {
                    name: property.clone(),
                });
            }
            let followed = pointer::follow(self.document, property_schema)?;
            read.push(Parameter {
                name: property.clone(),
                location: Location::Query,
                required,
                schema: property_schema.clone(),
                description: followed.get("description").cloned(),
                deprecated: followed.get("deprecated") == Some(&Value::Bool(true)),
                style: QueryStyle::Form,
                joined: false,
            });
        }
        Ok(read)
    }

    /// What a parameter's schema says of its shape, its references followed.
    fn shape(&self, schema: &'d Value) -> Result<Shape, SkipReason> {
        let schema = pointer::follow(self.document, schema)?;
        let own = types(schema);
        let array = own.contains("array");
        let object =
            own.contains("object") || (own.is_empty() && schema.get("properties").is_some());
        let mut items_not_scalar = false;
        if array && let Some(items) = schema.get("items") {
            let items = pointer::follow(self.document, items)?;
            let item_types = types(items);
            items_not_scalar = item_types.contains("object")
                || item_types.contains("array")
                || (item_types.is_empty() && items.get("properties").is_some());
        }
        Ok(Shape {
            array,
            object,
            items_not_scalar,
        })
    }

    /// The request body, its media type chosen: JSON first, else a form.
    fn body(&mut self, body: &'d Value) -> Result<RequestBody<'d>, SkipReason> {
        let body = pointer::follow(self.document, body)?;
        let Some(Value::Object(content)) = body.get("content") else {
            return Err(SkipReason::malformed("the request body has no `content`"));
        };
        let essence = |media_type: &str| {
            media_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        };
        let is_json = |media_type: &str| {
            let essence = essence(media_type);
            essence == "application/json" || essence.ends_with("+json")
        };
        let chosen = content
            .iter()
            .find(|(media_type, _)| is_json(media_type))
            .map(|(_, media)| (media, BodyEncoding::Json))
            .or_else(|| {
                content
                    .iter()
                    .find(|(media_type, _)| {
                        essence(media_type) == "application/x-www-form-urlencoded"
                    })
                    .map(|(_, media)| (media, BodyEncoding::Form))
            });
        let Some((media, encoding)) = chosen else {
            return Err(SkipReason::BodyNotJson {
                media_types: content.keys().cloned().collect(),
            });
        };
        static ANY: Value = Value::Bool(true);
        let schema = media.get("schema").unwrap_or(&ANY);
        let required = body.get("required") == Some(&Value::Bool(true));
        // A form's fields whose `encoding` says `deepObject` (Stripe's nested fields).
        let deep_objects = match (encoding, media.get("encoding")) {
            (BodyEncoding::Form, Some(Value::Object(fields))) => fields
                .iter()
                .filter(|(_, field)| {
                    field.get("style").and_then(Value::as_str) == Some("deepObject")
                })
                .map(|(name, _)| name.clone())
                .collect(),
            _ => Vec::new(),
        };
        if let (BodyEncoding::Form, Some(Value::Object(fields))) = (encoding, media.get("encoding"))
        {
            self.check_form_lists(schema, fields)?;
        }
        Ok(RequestBody {
            schema,
            encoding,
            deep_objects,
            required,
            description: body.get("description"),
        })
    }
}

impl Reader<'_> {
    /// A form sends a list as a key per value (`form`, exploded): a list field whose `encoding`
    /// says otherwise (joined by commas, spaces or pipes, as Swagger 2.0's default `csv` is)
    /// would be sent in a format the API does not read, so its operation is skipped.
    fn check_form_lists(
        &self,
        schema: &Value,
        fields: &Map<String, Value>,
    ) -> Result<(), SkipReason> {
        for (name, how) in fields {
            let style = how.get("style").and_then(Value::as_str).unwrap_or("form");
            let explode = how
                .get("explode")
                .and_then(Value::as_bool)
                .unwrap_or(style == "form");
            if style == "deepObject" || (style == "form" && explode) {
                continue;
            }
            let list = pointer::follow(self.document, schema)
                .ok()
                .and_then(|schema| schema.get("properties"))
                .and_then(|properties| properties.get(name))
                .and_then(|field| pointer::follow(self.document, field).ok())
                .is_some_and(|field| types(field).contains("array"));
            if list {
                return Err(SkipReason::ParameterStyle {
                    name: name.clone(),
                    style: format!("{style}, explode: {explode}, in a form"),
                });
            }
        }
        Ok(())
    }
}

/// A request body the tool can send.
struct RequestBody<'d> {
    schema: &'d Value,
    encoding: BodyEncoding,
    /// The form fields written as `deepObject`s.
    deep_objects: Vec<String>,
    required: bool,
    description: Option<&'d Value>,
}

/// What matters of a parameter's schema to where it can go.
struct Shape {
    array: bool,
    object: bool,
    items_not_scalar: bool,
}

/// The types a schema names (`type` as a string or a list).
fn types(schema: &Value) -> BTreeSet<&str> {
    match schema.get("type") {
        Some(Value::String(single)) => BTreeSet::from([single.as_str()]),
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => BTreeSet::new(),
    }
}

/// Checks that the path's `{names}` are exactly its path parameters.
fn check_path(path: &str, parameters: &[Parameter]) -> Result<(), SkipReason> {
    let mut in_path = BTreeSet::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return Err(SkipReason::PathMismatch {
                detail: "a { is never closed".to_owned(),
            });
        };
        in_path.insert(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    let declared: BTreeSet<&str> = parameters
        .iter()
        .filter(|parameter| parameter.location == Location::Path)
        .map(|parameter| parameter.name.as_str())
        .collect();
    if let Some(missing) = in_path.difference(&declared).next() {
        return Err(SkipReason::PathMismatch {
            detail: format!("{{{missing}}} has no path parameter"),
        });
    }
    if let Some(extra) = declared.difference(&in_path).next() {
        return Err(SkipReason::PathMismatch {
            detail: format!("the path parameter {extra:?} has no {{{extra}}} in the path"),
        });
    }
    let (segments, fixed_query) = path.split_once('?').unwrap_or((path, ""));
    if segments
        .split('/')
        .any(|segment| segment == "." || segment == "..")
        || !segments.starts_with('/')
        || fixed_query.contains(['{', '}'])
    {
        return Err(SkipReason::PathMismatch {
            detail:
                "the path does not start with /, holds a . or .. segment, or a {name} in its query"
                    .to_owned(),
        });
    }
    Ok(())
}

/// The parameter's description and deprecation on its property's schema, and where the value
/// goes when the property is named otherwise.
fn describe(schema: &mut Value, parameter: &Parameter, property: &str) {
    if let Value::Bool(true) = schema {
        *schema = json!({});
    }
    let Value::Object(object) = schema else {
        return;
    };
    let mut description = parameter
        .description
        .as_ref()
        .and_then(Value::as_str)
        .or_else(|| object.get("description").and_then(Value::as_str))
        .map(str::to_owned);
    if property != parameter.name {
        let place = format!(
            "(Sent as the {} parameter {:?}.)",
            parameter.location.as_str(),
            parameter.name
        );
        description = Some(match description {
            Some(text) => format!("{text} {place}"),
            None => place,
        });
    }
    if let Some(description) = description {
        object.insert("description".to_owned(), Value::String(description));
    }
    if parameter.deprecated {
        object.insert("deprecated".to_owned(), Value::Bool(true));
    }
}

/// The answer schema as a tool's `outputSchema`, when its root is an object (MCP wants
/// `type: "object"` there): the root as written, or the `$defs` entry a root `$ref` names,
/// copied to the root. `None` for any other answer (a list, a string, a union).
fn output_schema<'s>(
    answer: &'s Map<String, Value>,
    shared: impl Fn(&str) -> Option<&'s Value>,
) -> Option<Map<String, Value>> {
    let is_object = |schema: &Map<String, Value>| schema.get("type") == Some(&json!("object"));
    if is_object(answer) {
        return Some(answer.clone());
    }
    let target = answer
        .get("$ref")?
        .as_str()?
        .strip_prefix("#/$defs/")
        .filter(|name| !name.contains('/'))?;
    // The entry is the answer's own, or a shared one its `$defs` names.
    let entry = match answer.get("$defs")? {
        Value::Object(defs) => defs.get(target),
        Value::Array(_) => shared(target),
        _ => None,
    };
    let Value::Object(root) = entry? else {
        return None;
    };
    if !is_object(root) {
        return None;
    }
    let mut output = root.clone();
    for (keyword, value) in answer {
        if keyword != "$ref" {
            output.insert(keyword.clone(), value.clone());
        }
    }
    Some(output)
}

/// What HTTP says of a method: a safe method is read-only; PUT and DELETE are idempotent, POST
/// and PATCH not; DELETE is destructive. Nothing is guessed beyond that.
/// `requirements` with the schemes of the credential parameters an operation declares required
/// added to each alternative: such a parameter is sent whichever alternative the host meets,
/// since the API wants it. A document may list `key` and `token` as alternatives
/// (`security: [{key: []}, {token: []}]`) on an operation that also declares both required
/// query parameters: the API then takes only requests that carry both.
fn with_required(requirements: &mut Vec<SecurityRequirement>, required: &[String]) {
    if required.is_empty() {
        return;
    }
    if requirements.is_empty() {
        requirements.push(SecurityRequirement::new());
    }
    for requirement in requirements.iter_mut() {
        for scheme in required {
            requirement.entry(scheme.clone()).or_default();
        }
    }
    // Alternatives that became one are one.
    let mut seen = Vec::new();
    requirements.retain(|requirement| {
        let keys: Vec<String> = requirement.keys().cloned().collect();
        if seen.contains(&keys) {
            false
        } else {
            seen.push(keys);
            true
        }
    });
}

fn hints(method: &str, summary: Option<&str>) -> Annotations {
    let mut annotations = Annotations {
        title: summary.map(str::to_owned),
        ..Annotations::default()
    };
    match method {
        "get" | "head" | "options" | "trace" => annotations.read_only = Some(true),
        // OpenAPI 3.2's QUERY: safe and idempotent, a GET with a body.
        "query" => {
            annotations.read_only = Some(true);
            annotations.idempotent = Some(true);
        }
        "put" => {
            annotations.read_only = Some(false);
            annotations.idempotent = Some(true);
        }
        "delete" => {
            annotations.read_only = Some(false);
            annotations.idempotent = Some(true);
            annotations.destructive = Some(true);
        }
        _ => {
            annotations.read_only = Some(false);
            annotations.idempotent = Some(false);
        }
    }
    annotations
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;

    /// A document of `operations` operations whose bodies each reach every one of `schemas`
    /// chained schemas.
    fn chained(operations: usize, schemas: usize) -> Value {
        let mut components = Map::new();
        for index in 0..schemas {
            let next = (index + 1) % schemas;
            components.insert(
                format!("S{index}"),
                json!({"type": "object", "properties": {"next": {"$ref": format!("#/components/schemas/S{next}")}}}),
            );
        }
        let mut paths = Map::new();
        for index in 0..operations {
            paths.insert(
                format!("/o{index}"),
                json!({"post": {
                    "operationId": format!("o{index}"),
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}},
                    "responses": {}
                }}),
            );
        }
        json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths, "components": {"schemas": components}})
    }

    #[test]
    fn copies_past_the_budget_skip_their_operations_where_they_are() {
        let document = chained(10, 50);
        // One operation's copies: 50 schemas of about 70 bytes each.
        let options = ReadOptions::default().copy_budget(4 * 50 * 70);
        let read = crate::read_operations(&document, &options).unwrap();
        assert!(
            read.operations.len() >= 3 && read.operations.len() < 10,
            "{}",
            read.operations.len()
        );
        let skipped = &read.skipped[0];
        assert_eq!(skipped.reason.kind(), "overBudget");
        assert_eq!(
            skipped.location,
            format!("#/paths/~1o{}/post", read.operations.len())
        );
        assert!(
            skipped.reason.to_string().contains("shared `$defs`"),
            "{}",
            skipped.reason
        );
        assert_eq!(read.operations.len() + read.skipped.len(), 10);
        // Shared, the entries are held once: every operation is read within the same budget.
        let shared = crate::read_operations(&document, &options.shared_defs(true)).unwrap();
        assert_eq!(shared.operations.len(), 10);
        assert_eq!(shared.defs.len(), 50);
    }

    #[test]
    fn answers_left_out_take_no_copies() {
        // Ten operations whose answers reach the 50 chained schemas and whose inputs reach none.
        let mut document = chained(10, 50);
        for index in 0..10 {
            let operation = &mut document["paths"][format!("/o{index}")]["post"];
            operation["requestBody"] =
                json!({"content": {"application/json": {"schema": {"type": "object"}}}});
            operation["responses"] = json!({"200": {"description": "ok", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/S0"}}}}});
        }
        let options = ReadOptions::default().copy_budget(4 * 50 * 70);
        let with = crate::read_operations(&document, &options).unwrap();
        // Read, the answers' copies spend the budget: the later answers are lost to it.
        assert!(with.operations[0].definition.output_schema().is_some());
        assert!(with.answers.len() < 10, "{}", with.answers.len());
        // Left out, nothing is spent on them.
        let without = crate::read_operations(&document, &options.answers(false)).unwrap();
        assert_eq!(without.operations.len(), 10, "{:?}", without.skipped);
        assert!(without.answers.is_empty());
        assert!(
            without
                .operations
                .iter()
                .all(|operation| operation.definition.output_schema().is_none())
        );
    }

    /// OpenAPI 3.2's QUERY and `additionalOperations` are operations, the method kept on the
    /// wire; `in: querystring` a query parameter per property.
    #[test]
    fn openapi_3_2_query_additional_operations_and_querystring() {
        let document = json!({
            "openapi": "3.2.0",
            "info": {"title": "t", "version": "1"},
            "paths": {"/items": {
                "query": {
                    "operationId": "search_items",
                    "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                    "responses": {}
                },
                "additionalOperations": {
                    "COPY": {"operationId": "copy_items", "responses": {}},
                    "GET": {"responses": {}}
                },
                "get": {
                    "operationId": "list_items",
                    "parameters": [{
                        "name": "filter", "in": "querystring", "required": true,
                        "content": {"application/x-www-form-urlencoded": {"schema": {
                            "type": "object",
                            "properties": {
                                "status": {"type": "string"},
                                "tag": {"type": "array", "items": {"type": "string"}}
                            },
                            "required": ["status"],
                            "additionalProperties": false
                        }}}
                    }],
                    "responses": {}
                },
                "put": {
                    "operationId": "open_query",
                    "parameters": [{
                        "name": "q", "in": "querystring",
                        "content": {"application/x-www-form-urlencoded": {"schema": {
                            "type": "object", "properties": {}, "additionalProperties": true
                        }}}
                    }],
                    "responses": {}
                }
            }}
        });
        let read = crate::read_operations(&document, &ReadOptions::default()).unwrap();
        let by_name = |name: &str| {
            read.operations
                .iter()
                .find(|operation| operation.name() == name)
                .unwrap()
        };
        let query = by_name("search_items");
        assert_eq!(query.request.method, "QUERY");
        assert_eq!(query.definition.annotations.read_only, Some(true));
        assert_eq!(query.definition.annotations.idempotent, Some(true));
        assert_eq!(by_name("copy_items").request.method, "COPY");
        assert_eq!(
            by_name("copy_items").definition.annotations.read_only,
            Some(false)
        );
        let list = by_name("list_items");
        let names: Vec<&str> = list
            .request
            .parameters
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["status", "tag"]);
        assert!(
            list.request
                .parameters
                .iter()
                .all(|p| p.location == Location::Query)
        );
        assert_eq!(
            list.definition.input_schema()["required"],
            json!(["status"])
        );
        let skipped: Vec<(&str, &str)> = read
            .skipped
            .iter()
            .map(|skip| (skip.location.as_str(), skip.reason.kind()))
            .collect();
        assert_eq!(
            skipped,
            [
                ("#/paths/~1items/put", "parameterContent"),
                ("#/paths/~1items/additionalOperations/GET", "malformed"),
            ]
        );
    }

    /// A credential parameter an operation declares required is sent whichever alternative of
    /// its security the host meets: the API wants it.
    #[test]
    fn required_credential_parameters_join_every_alternative() {
        let document = json!({
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "components": {"securitySchemes": {
                "key": {"type": "apiKey", "in": "query", "name": "key"},
                "token": {"type": "apiKey", "in": "query", "name": "token"}
            }},
            "security": [{"key": []}, {"token": []}],
            "paths": {
                "/cards": {"get": {
                    "operationId": "cards",
                    "parameters": [
                        {"name": "key", "in": "query", "required": true, "schema": {"type": "string"}},
                        {"name": "token", "in": "query", "required": true, "schema": {"type": "string"}}
                    ],
                    "responses": {}
                }},
                "/boards": {"get": {
                    "operationId": "boards",
                    "parameters": [
                        {"name": "token", "in": "query", "schema": {"type": "string"}}
                    ],
                    "responses": {}
                }},
                "/open": {"get": {
                    "operationId": "open",
                    "security": [],
                    "parameters": [
                        {"name": "key", "in": "query", "required": true, "schema": {"type": "string"}}
                    ],
                    "responses": {}
                }}
            }
        });
        let read = crate::read_operations(&document, &ReadOptions::default()).unwrap();
        let requirement = |schemes: &[&str]| -> SecurityRequirement {
            schemes
                .iter()
                .map(|scheme| ((*scheme).to_owned(), Vec::new()))
                .collect()
        };
        let requirements = &read.security.requirements;
        assert_eq!(requirements["cards"], [requirement(&["key", "token"])]);
        assert_eq!(
            requirements["boards"],
            [requirement(&["key"]), requirement(&["token"])]
        );
        assert_eq!(requirements["open"], [requirement(&["key"])]);
        assert!(read.operations.iter().all(|operation| {
            operation.definition.input_schema()["properties"]
                .as_object()
                .unwrap()
                .is_empty()
        }));
    }
}
