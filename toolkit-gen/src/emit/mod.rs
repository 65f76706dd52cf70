//! JSON Schema → Rust types: the input struct (and its nested types) of each tool.
//!
//! [`input_types`] writes the types of one input schema; [`module`] those of many tools (an
//! MCP `tools/list`, a catalog), and [`openapi_module`] those of the operations the runtime's
//! OpenAPI reader made of a document, so that a generated type and the tool discovered at run
//! time read the same schema.
//!
//! [`openapi_source`] and [`mcp_source`] write the whole module of a document or snapshot: those
//! types and one source type (`source.rs`) that implements `ToolSource` over `toolkit-http`'s
//! `HttpSource` or `toolkit-mcp`'s `SnapshotSource`, the operations or definitions one JSON
//! constant (embedded, or read with `include_str!` from a file beside the module:
//! [`SourceOptions::catalog_file`]), with a typed method per tool that is one `call_typed` (or
//! `call_answered`) line. A module names one crate, as `__tk`: `toolkit_http::codegen` or
//! `toolkit_mcp::codegen` (the core's contract with the source kind beside it), or, for types
//! without a source ([`input_types`], [`module`]), `toolkit_core::codegen`.
//!
//! What a schema becomes:
//!
//! - an object: a struct, whose required properties are fields and others `Option`s left out when
//!   `None`; names not usable in Rust are renamed (`if-match` → `if_match`, `type` → `r#type`,
//!   `StartTime<` → `start_time_before`); strict by default (`#[serde(deny_unknown_fields)]`), or
//!   as closed as the schema says ([`Strictness::FollowSchema`], extras kept in a flattened map);
//! - an object with only `additionalProperties: {schema}`: a `BTreeMap<String, T>`; with nothing
//!   said: a `serde_json::Map`;
//! - a string `enum` or `const`: an enum whose impls (serde by its values, `as_str`, `Display`,
//!   `FromStr`) come from `toolkit_core::codegen::string_enum!` (`ASC` and `asc` are `Asc` and
//!   `Asc2`, `+1` is `Plus1`);
//! - `type: [T, "null"]`, a `null` in an `enum`, `anyOf: [T, {type: null}]`: `Option<T>`;
//! - `prefixItems` (or draft-07 `items: [..]`): a tuple; `items`: a `Vec`;
//! - a local `$ref` (into `$defs`, `definitions` or any pointer of the schema): the target's type,
//!   named once; a reference back into a type being defined is boxed, and so is a named type
//!   larger than 256 bytes where another holds it inline (`boxing.rs`). A `$defs` (or
//!   `definitions`) entry is one type for the whole module, named after its key (`Pet`) and shared
//!   by every tool whose entry of that key has the same content (`shared.rs`); anonymous string
//!   enums of the same values, and anonymous structs and unions of the same documentation and
//!   body, are one type too;
//! - a type whose body equals another's (GitHub's `simple-user` and `nullable-simple-user`) is
//!   an alias of it (`dedup.rs`), tool inputs aside;
//! - a struct whose fields are all optional derives `Default`;
//! - `allOf`: its one member, or the objects merged into one struct;
//! - `oneOf`/`anyOf`: one primitive (`string(ipv4) | string(ipv6)`), an enum of all strings, an
//!   internally tagged enum when a property holds a different constant in each member, an
//!   untagged enum when each member is a different JSON kind;
//! - anything else: `serde_json::Value`, listed in [`Emitted::untyped`] with its JSON pointer.
//!
//! Nothing panics and no tool is dropped, whatever the schema.
//!
//! The emitter is written here rather than taken from `typify`: typify panics on real schemas
//! (Twilio's `format: uri-map` object, enum values `ASC`/`asc`), reads draft-07 only, makes strict
//! structs only for `additionalProperties: false`, and its next release needs rustc 1.97.
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use toolkit_gen::emit::{EmitOptions, input_types};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "petId": { "type": "integer" },
//!         "order": { "enum": ["ASC", "asc"] }
//!     },
//!     "required": ["petId"]
//! });
//! let emitted = input_types("get_pet", &schema, &EmitOptions::default());
//! assert_eq!(emitted.root_type, "GetPetInput");
//! assert!(emitted.code.contains("pub struct GetPetInput"));
//! assert!(emitted.code.contains("#[serde(rename = \"petId\")]\n    pub pet_id: i64,"));
//! assert!(emitted.code.contains("Asc2"));
//! assert!(emitted.untyped.is_empty());
//! ```

mod boxing;
mod convert;
mod customize;
mod dedup;
mod lints;
mod naming;
mod rust;
mod schema;
mod shared;
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use proc_macro2::TokenStream;
use serde_json::Value;
use toolkit_core::ToolDefinition;
use toolkit_openapi::ReadOperations;
use toolkit_openapi::operations::RequestTemplate;

use naming::Scope;
use shared::Shared;

#[cfg(feature = "internals")]
pub use customize::KNOWN_FORMATS;
pub use customize::{Customizations, Matched};

/// How closed the emitted structs are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strictness {
    /// Every struct refuses properties its schema does not name (`deny_unknown_fields`), whatever
    /// the schema says: a model's misspelt argument is an error, not silently dropped.
    #[default]
    Strict,
    /// A struct is closed when its schema says `additionalProperties: false`; otherwise it keeps
    /// the properties it does not name in a flattened map `extra`.
    FollowSchema,
}

/// How the emitter writes types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitOptions {
    /// How closed structs are.
    pub strictness: Strictness,
    /// The user's type replacements and attributes (none by default).
    pub customizations: Customizations,
    /// The most types a module may hold ([`DEFAULT_MAX_TYPES`] by default): a document that
    /// needs more is refused in [`Module::errors`], naming the tool whose types passed the
    /// bound, rather than taking the machine's memory (each type costs about 70 KB while a
    /// module is made).
    pub max_types: usize,
}

/// The most types a module may hold unless told otherwise
/// ([`Builder::max_types`](crate::Builder::max_types)): 100,000, three times what the largest real
/// API document known needs (Microsoft Graph beta: 32,086 types, 2.2 GB at the peak).
pub const DEFAULT_MAX_TYPES: usize = 100_000;

impl Default for EmitOptions {
    fn default() -> Self {
        Self {
            strictness: Strictness::default(),
            customizations: Customizations::default(),
            max_types: DEFAULT_MAX_TYPES,
        }
    }
}

/// A place of a schema typed as `serde_json::Value` for want of a better type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Untyped {
    /// Where, as a JSON pointer into the tool's input schema (`#/properties/filter/oneOf`).
    pub pointer: String,
    /// Why.
    pub reason: String,
}

impl fmt::Display for Untyped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pointer, self.reason)
    }
}

/// The types of one input schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// The Rust source of the types, formatted.
    pub code: String,
    /// The name of the input's type.
    pub root_type: String,
    /// The places typed as `serde_json::Value` for want of a better type.
    pub untyped: Vec<Untyped>,
}

/// The types of one tool in a [`Module`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolTypes {
    /// The tool's name.
    pub tool: String,
    /// The name of its input's type.
    pub root_type: String,
    /// The places of its input typed as `serde_json::Value` for want of a better type.
    pub untyped: Vec<Untyped>,
}

impl ToolTypes {
    /// Whether the tool's whole input is typed (nothing fell back to `serde_json::Value`).
    pub fn is_typed(&self) -> bool {
        self.untyped.is_empty()
    }
}

/// What a tool's answer schema became: the type its typed method returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerType {
    /// The answer's type (`Pet`, `ListPetsAnswer`), or `None` when the whole answer is a
    /// `serde_json::Value` (the method returns that).
    pub root_type: Option<String>,
    /// The places of the answer typed as `serde_json::Value` for want of a better type.
    pub untyped: Vec<Untyped>,
}

impl AnswerType {
    /// Whether the answer has a type (its typed method returns more than a `Value`).
    pub fn is_typed(&self) -> bool {
        self.root_type.is_some()
    }
}

/// The input types of many tools, as one source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// The Rust source: an `// @generated by toolkit-gen` header, then every tool's types.
    pub code: String,
    /// What each tool's input became, in the order of the tools.
    pub tools: Vec<ToolTypes>,
    /// What each tool's answer became, by tool name, for the tools that declare an answer
    /// schema (an OpenAPI operation's success answer, an MCP tool's `outputSchema`).
    pub answers: BTreeMap<String, AnswerType>,
    /// Which of the type replacements and attributes asked for
    /// ([`Builder::replace_format`](crate::Builder::replace_format),
    /// [`Builder::type_attribute`](crate::Builder::type_attribute), …) the module used.
    pub matched: Matched,
    /// Why the code must not be written, each naming the tool whose schema caused it: emitted
    /// tokens that do not parse (a user's type or attribute, or a bug of the emitter). Empty
    /// when the code is good.
    pub errors: Vec<String>,
    /// The source's catalog (its operations or definitions as JSON), to be written beside the
    /// module when it is kept there (unless
    /// [`Builder::embed_catalog`](crate::Builder::embed_catalog)); the module reads it with
    /// `include_str!`. `None` when the catalog is inside the module, or there is no source type.
    pub catalog: Option<Catalog>,
}

/// A source's catalog kept in a file beside its module (`petstore.tools.json` beside
/// `petstore.rs`): the module stays a module of code, and a diff of the JSON shows which
/// operation changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    /// The file's name, as the module's `include_str!` names it (relative to the module).
    pub file: String,
    /// The file's content: a JSON document, one operation or tool a line.
    pub json: String,
}

impl Module {
    /// The share of the tools whose whole input is typed, from 0 to 1 (1 with no tool).
    pub fn typed_share(&self) -> f64 {
        if self.tools.is_empty() {
            return 1.0;
        }
        let typed = self.tools.iter().filter(|t| t.is_typed()).count();
        #[allow(clippy::cast_precision_loss)]
        let share = typed as f64 / self.tools.len() as f64;
        share
    }
}

/// The header of every generated file; `input` names what it was generated from.
fn header(input: &str) -> String {
    let input = input.replace(['\n', '\r'], " ");
    format!("// @generated by toolkit-gen from {input}. Do not edit.\n")
}

#[cfg(feature = "internals")]
/// The documentation of a tool's input type.
fn root_doc(tool: &str, description: Option<&str>) -> String {
    match description.map(str::trim).filter(|d| !d.is_empty()) {
        Some(description) => format!("The input of the tool `{tool}`.\n\n{description}"),
        None => format!("The input of the tool `{tool}`."),
    }
}

/// What the emitter makes of each tool's input when the tools are one module whose schemas
/// name their `$defs` entries, held once in `defs` (as the reader writes them with
/// [`ReadOptions::shared_defs`](toolkit_openapi::ReadOptions::shared_defs())): each entry is
/// converted once for all the tools that name it, so the cost grows with the document rather
/// than with its operations times the schemas each reaches. No code is written: `toolkit-gen
/// report` wants the types and the places that fell back to `serde_json::Value`.
pub fn module_typing(
    definitions: &[&ToolDefinition],
    defs: &toolkit_core::JsonObject,
    options: &EmitOptions,
    mut step: impl FnMut(&str),
) -> Vec<ToolTypes> {
    let mut types = Scope::module();
    let mut shared = Shared::default();
    let schemas: Vec<&toolkit_core::JsonObject> = definitions
        .iter()
        .map(|definition| definition.input_schema())
        .collect();
    shared.reserve_schemas(&schemas, &mut types);
    definitions
        .iter()
        .map(|definition| {
            let schema = Value::Object(definition.input_schema().clone());
            let converted = convert::convert_tool(
                definition.name(),
                &schema,
                None,
                options,
                convert::ModuleTypes {
                    types: &mut types,
                    shared: &mut shared,
                    defs,
                },
            );
            step(definition.name());
            ToolTypes {
                tool: definition.name().to_owned(),
                root_type: converted.root_type,
                untyped: converted.untyped,
            }
        })
        .collect()
}

/// Writes the Rust types of the input schema `schema` of the tool `tool_name`: the input's type is
/// named after the tool (`get_pet` → `GetPetInput`), the types inside it after their place
/// (`GetPetInputOrder`).
///
/// Never fails: what can't be typed is a `serde_json::Value`, listed in [`Emitted::untyped`].
///
/// ```
/// use serde_json::json;
/// use toolkit_gen::emit::{EmitOptions, input_types};
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "q": { "type": "string" },
///         "where": { "oneOf": [
///             { "type": "object", "properties": { "city": { "type": "string" } } },
///             { "type": "object", "properties": { "zip": { "type": "string" } } }
///         ] }
///     }
/// });
/// let emitted = input_types("search", &schema, &EmitOptions::default());
/// assert!(emitted.code.contains("pub struct SearchInput"));
/// // Two objects with nothing to tell them apart: a `Value`, reported.
/// assert!(emitted.code.contains("pub r#where: __tk::Nullable<__tk::serde_json::Value>,"));
/// assert_eq!(emitted.untyped[0].pointer, "#/properties/where/oneOf");
/// ```
pub fn input_types(tool_name: &str, schema: &Value, options: &EmitOptions) -> Emitted {
    let mut types = Scope::module();
    let mut shared = Shared::default();
    let converted = convert::convert_tool(
        tool_name,
        schema,
        None,
        options,
        convert::ModuleTypes {
            types: &mut types,
            shared: &mut shared,
            defs: &toolkit_core::JsonObject::new(),
        },
    );
    let attributes = customize::Attributes::new(&options.customizations);
    let mut items = converted.items;
    shared.close_deciding(&mut items);
    boxing::box_large_types(std::slice::from_mut(&mut items));
    // Types without a source: the core's contract.
    let mut tokens = rust::prelude(&source::contract(None));
    tokens.extend(rust::items(&items, &attributes, &mut Matched::default()));
    let (code, problem) = rust::format(&header(&format!("the tool `{tool_name}`")), tokens);
    let mut untyped = converted.untyped;
    if let Some(problem) = problem {
        untyped.push(Untyped {
            pointer: "#".to_owned(),
            reason: format!("the emitted code does not parse (a bug of toolkit-gen): {problem}"),
        });
    }
    Emitted {
        code,
        root_type: converted.root_type,
        untyped,
    }
}

#[cfg(feature = "internals")]
/// Writes the input types of `definitions` as one file whose header names `input` (a file name,
/// a server). Type names are unique across the tools; the same definitions give the same bytes.
///
/// ```
/// use serde_json::json;
/// use toolkit_gen::emit::{EmitOptions, module};
/// use toolkit_core::ToolDefinition;
///
/// let schema = json!({ "type": "object", "properties": { "q": { "type": "string" } } });
/// let definition = ToolDefinition::new("search", schema.as_object().cloned().unwrap_or_default())?;
/// let module = module("tasks.json", &[definition], &EmitOptions::default());
/// assert!(module.code.starts_with("// @generated by toolkit-gen from tasks.json"));
/// assert_eq!(module.tools[0].root_type, "SearchInput");
/// assert_eq!(module.typed_share(), 1.0);
/// # Ok::<(), toolkit_runtime::definition::DefinitionError>(())
/// ```
pub fn module(input: &str, definitions: &[ToolDefinition], options: &EmitOptions) -> Module {
    let mut types = Scope::module();
    let inputs: Vec<InputNaming<'_>> = definitions
        .iter()
        .map(|definition| InputNaming {
            base: definition.name(),
            doc: root_doc(definition.name(), definition.description.as_deref()),
        })
        .collect();
    let types = tool_types(
        definitions,
        &[],
        &[],
        &toolkit_core::JsonObject::new(),
        &inputs,
        options,
        &mut types,
        &mut |_| {},
    );
    finish(input, None, types, TokenStream::new())
}

/// The types of a module's tools: each tool's tokens, what its input became, and the
/// customizations used.
struct Typed {
    /// Every tool's types (the module's prelude goes before them: [`finish`]).
    tokens: TokenStream,
    /// Each tool's type model, kept to tell which tool's tokens fail to parse, should any.
    items: Vec<Vec<schema::Item>>,
    attributes: customize::Attributes,
    tools: Vec<ToolTypes>,
    answers: BTreeMap<String, AnswerType>,
    matched: Matched,
    /// Why no module can be written: more types than [`EmitOptions::max_types`].
    over: Option<String>,
}

/// The schemas of each tool's answer, by tool name: an OpenAPI document's (the reader's
/// `answers`), or an MCP tool's `outputSchema`.
fn mcp_answers(definitions: &[ToolDefinition]) -> BTreeMap<String, &toolkit_core::JsonObject> {
    definitions
        .iter()
        .filter_map(|definition| Some((definition.name().to_owned(), definition.output_schema()?)))
        .collect()
}

/// The type of `answer` (the answer schema of the tool `tool`, its Rust names made from
/// `base`), its items added to `items`.
fn answer_type(
    tool: &str,
    base: &str,
    answer: &toolkit_core::JsonObject,
    options: &EmitOptions,
    module: convert::ModuleTypes<'_>,
    matched: &mut Matched,
    items: &mut Vec<schema::Item>,
) -> AnswerType {
    let converted = convert::convert_answer(
        base,
        &Value::Object(answer.clone()),
        Some(format!("The answer of the tool `{tool}`.")),
        options,
        module,
    );
    let mut converted = converted;
    let mut root_type = Some(converted.root_type.clone());
    // A root that only names another type (`$ref: Pet`) is that type; a root that is all
    // `Value` is no type.
    if let Some(first) = converted.items.first()
        && first.name == converted.root_type
        && let schema::ItemKind::Alias(ty) = &first.kind
    {
        match ty {
            schema::Ty::Named(name) => root_type = Some(name.clone()),
            schema::Ty::Value => root_type = None,
            _ => {}
        }
        if root_type.as_deref() != Some(converted.root_type.as_str()) {
            converted.items.remove(0);
        }
    }
    matched.merge(&converted.matched);
    items.extend(converted.items);
    AnswerType {
        root_type,
        untyped: converted.untyped,
    }
}

/// How one tool's input type is named and documented.
struct InputNaming<'a> {
    /// The name its types are named after (`get_pet` → `GetPetInput`).
    base: &'a str,
    /// Its documentation.
    doc: String,
}

/// The types of each of `definitions`, named after `inputs` (one per definition), in `types`;
/// the fields of an input say where `requests` (one per definition, when HTTP operations) put
/// them; `defs` are the `$defs` entries of schemas that name theirs; `typed` hears each tool's
/// name once its types are made.
#[allow(clippy::too_many_arguments)]
fn tool_types(
    definitions: &[ToolDefinition],
    requests: &[&RequestTemplate],
    answers: &[Option<&toolkit_core::JsonObject>],
    defs: &toolkit_core::JsonObject,
    inputs: &[InputNaming<'_>],
    options: &EmitOptions,
    types: &mut Scope,
    typed: &mut dyn FnMut(&str),
) -> Typed {
    let attributes = customize::Attributes::new(&options.customizations);
    let mut matched = Matched::default();
    let mut items = Vec::with_capacity(definitions.len());
    let mut shared = Shared::default();
    let mut schemas: Vec<&toolkit_core::JsonObject> = definitions
        .iter()
        .map(ToolDefinition::input_schema)
        .collect();
    schemas.extend(answers.iter().flatten().copied());
    shared.reserve_schemas(&schemas, types);
    shared.lenient = answers
        .iter()
        .flatten()
        .flat_map(|answer| shared::entry_names(answer))
        .map(str::to_owned)
        .collect();
    let mut tools = Vec::with_capacity(definitions.len());
    let mut answer_types = BTreeMap::new();
    let mut count = 0_usize;
    let mut over = None;
    for (index, (definition, naming)) in definitions.iter().zip(inputs).enumerate() {
        let base = naming.base;
        let schema = Value::Object(definition.input_schema().clone());
        let converted = convert::convert_tool(
            base,
            &schema,
            Some(naming.doc.clone()),
            options,
            convert::ModuleTypes {
                types,
                shared: &mut shared,
                defs,
            },
        );
        let mut converted = converted;
        if let Some(request) = requests.get(index) {
            locate(&mut converted.items, &converted.root_type, request);
        }
        matched.merge(&converted.matched);
        let mut tool_items = converted.items;
        if let Some(Some(answer)) = answers.get(index) {
            let answer = answer_type(
                definition.name(),
                base,
                answer,
                options,
                convert::ModuleTypes {
                    types,
                    shared: &mut shared,
                    defs,
                },
                &mut matched,
                &mut tool_items,
            );
            answer_types.insert(definition.name().to_owned(), answer);
        }
        count = count.saturating_add(tool_items.len());
        items.push(tool_items);
        tools.push(ToolTypes {
            tool: definition.name().to_owned(),
            root_type: converted.root_type,
            untyped: converted.untyped,
        });
        typed(definition.name());
        if count > options.max_types {
            over = Some(format!(
                "the module would hold more than {} types (`max_types`): the types of the \
                 tool `{}` ({} of {}) passed the bound; generate fewer tools (a filter) or \
                 raise it",
                options.max_types,
                definition.name(),
                index + 1,
                definitions.len()
            ));
            break;
        }
    }
    if over.is_some() {
        return Typed {
            tokens: TokenStream::new(),
            items,
            attributes,
            tools,
            answers: answer_types,
            matched,
            over,
        };
    }
    // Written once every tool is converted: a union met late may take the catch-all off an
    // enum made early, and a type made late may have the body of one made early.
    for tool_items in &mut items {
        shared.close_deciding(tool_items);
    }
    let inputs: std::collections::HashSet<String> =
        tools.iter().map(|tool| tool.root_type.clone()).collect();
    dedup::alias_equal_types(&mut items, &inputs, &shared.named_types(), &attributes);
    boxing::box_large_types(&mut items);
    let mut tokens = TokenStream::new();
    for tool_items in &items {
        tokens.extend(rust::items(tool_items, &attributes, &mut matched));
    }
    Typed {
        tokens,
        items,
        attributes,
        tools,
        answers: answer_types,
        matched,
        over: None,
    }
}

/// Says on each field of the input type `root_type` where `request` puts it (`In the query.`),
/// after the property's own documentation.
fn locate(items: &mut [schema::Item], root_type: &str, request: &RequestTemplate) {
    let Some(schema::Item {
        kind: schema::ItemKind::Struct(structure),
        ..
    }) = items.iter_mut().find(|item| item.name == root_type)
    else {
        return;
    };
    for field in &mut structure.fields {
        let place = if let Some(parameter) = request
            .parameters
            .iter()
            .find(|parameter| parameter.property == field.json_name)
        {
            let what = match parameter.location.as_str() {
                "path" => "In the path",
                "query" => "In the query",
                _ => "A header",
            };
            // A parameter named otherwise than its property is named in the property's
            // description already, by the reader.
            format!("{what}.")
        } else if request
            .body
            .as_ref()
            .is_some_and(|body| body.property == field.json_name)
        {
            "The request's body.".to_owned()
        } else {
            continue;
        };
        // On the description's one line, or as a paragraph of its own after several (where it
        // could join a list).
        field.doc = Some(match field.doc.take() {
            Some(doc) if doc.trim().contains('\n') => format!("{doc}\n\n{place}"),
            Some(doc) if doc.trim().ends_with(['.', '!', '?', ')']) => {
                format!("{} {place}", doc.trim())
            }
            Some(doc) => format!("{}. {place}", doc.trim()),
            None => place,
        });
    }
}

/// Formats a module's tokens (its prelude, naming the contract of its source's `kind`, each
/// tool's types, then `rest`) after its header. Should they not parse, each tool whose own types
/// do not is named in [`Module::errors`] (the module alone when every tool's do).
fn finish(input: &str, kind: Option<source::Kind>, typed: Typed, rest: TokenStream) -> Module {
    if let Some(over) = typed.over {
        return Module {
            code: String::new(),
            tools: typed.tools,
            answers: typed.answers,
            matched: typed.matched,
            errors: vec![over],
            catalog: None,
        };
    }
    let mut tokens = rust::prelude(&source::contract(kind));
    tokens.extend(typed.tokens);
    tokens.extend(rest);
    let (code, problem) = rust::format(&header(input), tokens);
    let mut errors = Vec::new();
    if let Some(problem) = problem {
        // Rare: each tool's tokens made again, to name the ones that do not parse.
        for (tool, items) in typed.tools.iter().zip(&typed.items) {
            let tool_tokens = rust::items(items, &typed.attributes, &mut Matched::default());
            if let Err(error) = syn::parse2::<syn::File>(tool_tokens) {
                errors.push(format!(
                    "the types of the tool `{}` do not parse as Rust (check the type replacements \
                     and attributes that apply to it): {error}",
                    tool.tool
                ));
            }
        }
        if errors.is_empty() {
            errors.push(format!(
                "the module does not parse as Rust (a bug of toolkit-gen): {problem}"
            ));
        }
    }
    Module {
        code,
        tools: typed.tools,
        answers: typed.answers,
        matched: typed.matched,
        errors,
        catalog: None,
    }
}

#[cfg(feature = "internals")]
/// Writes the input types of the operations the runtime's OpenAPI reader read from a document
/// (see [`toolkit_openapi::read_operations`]); `input` names the document.
pub fn openapi_module(input: &str, read: &ReadOperations, options: &EmitOptions) -> Module {
    let definitions: Vec<ToolDefinition> = read
        .operations
        .iter()
        .map(|operation| operation.definition.clone())
        .collect();
    module(input, &definitions, options)
}

/// How the source type of a generated module is named, and its tools' Rust names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceOptions {
    /// The source's name (`petstore`): what an assembly puts before its tools' names, and, in
    /// UpperCamelCase, the source type's name (`Petstore`).
    pub name: String,
    /// Rust names for tools, by tool name: the method (`show_pet`) and the input type
    /// (`ShowPetInput`) of the tool `showPetById` made from `show_pet`. The tool keeps its name:
    /// a generated tool and the same tool discovered at run time are named alike.
    pub renames: BTreeMap<String, String>,
    /// The most characters of a tool's name its Rust names are made from (a method, an input
    /// type), for documents with very long operation ids; no limit when `None`.
    pub max_name_length: Option<usize>,
    /// The tools whose typed methods are `#[deprecated]`, by tool name (the operations a
    /// document marks `deprecated`: see [`crate::inputs::deprecated_tools`]).
    pub deprecated: BTreeSet<String>,
    /// The file the catalog goes to, beside the module (`petstore.tools.json`): the module reads it
    /// with `include_str!` and [`Module::catalog`] holds it for the caller to write. `None`
    /// embeds the catalog in the module as a raw string (a module that must stand alone, such as
    /// one printed to stdout). The catalog of a large document is most of the module:
    /// GitHub's is 2.75 MB of JSON.
    pub catalog_file: Option<String>,
}

impl SourceOptions {
    /// The options of a source named `name`, with no renames and no limit.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            renames: BTreeMap::new(),
            max_name_length: None,
            deprecated: BTreeSet::new(),
            catalog_file: None,
        }
    }

    /// The name the Rust names of `tool` are made from.
    fn base(&self, tool: &str) -> String {
        let base = self.renames.get(tool).map_or(tool, String::as_str);
        match self.max_name_length {
            Some(length) => base.chars().take(length.max(1)).collect(),
            None => base.to_owned(),
        }
    }
}

#[cfg(feature = "internals")]
/// Writes the module of an OpenAPI document: the input types of the operations the runtime's
/// reader read (see [`toolkit_openapi::read_operations`]) and a source type that sends
/// them, with a typed method per operation. `input` names the document.
///
/// ```
/// use serde_json::json;
/// use toolkit_gen::emit::{EmitOptions, SourceOptions, openapi_source};
/// use toolkit_runtime::openapi::{ReadOptions, read_operations};
///
/// let document = json!({
///     "openapi": "3.1.0",
///     "info": { "title": "Pets", "version": "1" },
///     "paths": { "/pets": { "get": { "operationId": "listPets", "responses": {} } } }
/// });
/// let read = read_operations(&document, &ReadOptions::default())?;
/// let module = openapi_source("petstore.yaml", &read, &SourceOptions::new("petstore"), &EmitOptions::default());
/// assert!(module.code.contains("pub struct Petstore(__tk::HttpSource);"));
/// assert!(module.code.contains("pub async fn list_pets("));
/// # Ok::<(), toolkit_runtime::openapi::NotOpenApi>(())
/// ```
pub fn openapi_source(
    input: &str,
    read: &ReadOperations,
    source: &SourceOptions,
    options: &EmitOptions,
) -> Module {
    openapi_source_observed(input, read, source, options, &mut |_| {})
}

/// [`openapi_source`], telling `typed` each tool's name once its types are made (for a progress
/// bar).
pub fn openapi_source_observed(
    input: &str,
    read: &ReadOperations,
    source: &SourceOptions,
    options: &EmitOptions,
    typed: &mut dyn FnMut(&str),
) -> Module {
    let definitions: Vec<ToolDefinition> = read
        .operations
        .iter()
        .map(|operation| operation.definition.clone())
        .collect();
    // Each `$defs` entry once, however many operations reach it (the runtime puts them back).
    let data = if read.defs.is_empty() {
        toolkit_openapi::operations::encode_operations(&read.operations)
    } else {
        toolkit_openapi::operations::encode_shared_operations(&read.operations, &read.defs)
    };
    let requests: Vec<&RequestTemplate> = read
        .operations
        .iter()
        .map(|operation| &operation.request)
        .collect();
    let security = (!read.security.schemes.is_empty()).then(|| source::Security {
        json: serde_json::json!({
            "schemes": read.security.schemes,
            "requirements": read.security.requirements,
        })
        .to_string(),
        schemes: read.security.schemes.keys().cloned().collect(),
    });
    let answers: Vec<Option<&toolkit_core::JsonObject>> = definitions
        .iter()
        .map(|definition| read.answers.get(definition.name()))
        .collect();
    source_module(
        input,
        source::Kind::Http,
        &definitions,
        &requests,
        &answers,
        &read.defs,
        &data,
        security.as_ref(),
        source,
        options,
        typed,
    )
}

#[cfg(feature = "internals")]
/// Writes the module of an MCP snapshot: the input types of its tools and a source type over the
/// server, whose definitions are the snapshot's, with a typed method per tool and `verify`.
/// `input` names the snapshot.
///
/// ```
/// use serde_json::json;
/// use toolkit_gen::emit::{EmitOptions, SourceOptions, mcp_source};
/// use toolkit_core::ToolDefinition;
///
/// let schema = json!({ "type": "object", "properties": { "q": { "type": "string" } } });
/// let definition = ToolDefinition::new("search", schema.as_object().cloned().unwrap_or_default())?;
/// let module = mcp_source("tasks.json", &[definition], &SourceOptions::new("tasks"), &EmitOptions::default());
/// assert!(module.code.contains("pub struct Tasks(__tk::SnapshotSource);"));
/// assert!(module.code.contains("pub async fn search("));
/// # Ok::<(), toolkit_runtime::definition::DefinitionError>(())
/// ```
pub fn mcp_source(
    input: &str,
    definitions: &[ToolDefinition],
    source: &SourceOptions,
    options: &EmitOptions,
) -> Module {
    mcp_source_observed(input, definitions, source, options, &mut |_| {})
}

/// [`mcp_source`], telling `typed` each tool's name once its types are made (for a progress bar).
pub fn mcp_source_observed(
    input: &str,
    definitions: &[ToolDefinition],
    source: &SourceOptions,
    options: &EmitOptions,
    typed: &mut dyn FnMut(&str),
) -> Module {
    let data = catalog(definitions.iter().map(serde_json::to_string));
    let by_name = mcp_answers(definitions);
    let answers: Vec<Option<&toolkit_core::JsonObject>> = definitions
        .iter()
        .map(|definition| by_name.get(definition.name()).copied())
        .collect();
    source_module(
        input,
        source::Kind::Mcp,
        definitions,
        &[],
        &answers,
        &toolkit_core::JsonObject::new(),
        &data,
        None,
        source,
        options,
        typed,
    )
}

/// The JSON array an MCP module embeds (its tools): compact, one element a line, so that the
/// module stays small and a diff shows which tool changed.
fn catalog(elements: impl Iterator<Item = serde_json::Result<String>>) -> String {
    let mut out = String::from("[");
    // Operations and definitions are maps of strings: they always serialize.
    for (index, element) in elements.flatten().enumerate() {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        out.push_str(&element);
    }
    out.push_str("\n]");
    out
}

/// Whether `name` is a Rust keyword (and so names no module).
pub(crate) fn is_keyword(name: &str) -> bool {
    naming::is_keyword(name)
}

/// The name of the source type of a module whose source is named `name` (`petstore` →
/// `Petstore`).
pub(crate) fn source_type_name(name: &str) -> String {
    // As the module names it: first in its scope, where the prelude's names are taken.
    Scope::module().unique(&naming::type_name(name), "")
}

#[allow(clippy::too_many_arguments)]
fn source_module(
    input: &str,
    kind: source::Kind,
    definitions: &[ToolDefinition],
    requests: &[&RequestTemplate],
    answers: &[Option<&toolkit_core::JsonObject>],
    defs: &toolkit_core::JsonObject,
    data: &str,
    security: Option<&source::Security>,
    source: &SourceOptions,
    options: &EmitOptions,
    typed: &mut dyn FnMut(&str),
) -> Module {
    let mut types = Scope::module();
    let type_name = types.unique(&naming::type_name(&source.name), "");
    let bases: Vec<String> = definitions
        .iter()
        .map(|definition| source.base(definition.name()))
        .collect();
    let mut method_names = Scope::default();
    for reserved in source::RESERVED_METHODS {
        method_names.unique(reserved, "_");
    }
    let method_names: Vec<String> = bases
        .iter()
        .map(|base| method_names.unique(&naming::field_name(base), "_"))
        .collect();
    // The method says what the tool does; its input links there rather than say it again.
    let inputs: Vec<InputNaming<'_>> = bases
        .iter()
        .zip(&method_names)
        .map(|(base, method)| InputNaming {
            base,
            doc: format!("The input of `{type_name}::{method}`."),
        })
        .collect();
    let typed = tool_types(
        definitions,
        requests,
        answers,
        defs,
        &inputs,
        options,
        &mut types,
        typed,
    );
    let methods: Vec<source::Method> = definitions
        .iter()
        .zip(method_names)
        .zip(&typed.tools)
        .enumerate()
        .map(|(index, ((definition, name), types))| source::Method {
            tool: definition.name().to_owned(),
            request: requests
                .get(index)
                .map(|request| format!("{} {}", request.method, request.path)),
            name,
            input: types.root_type.clone(),
            answer: typed
                .answers
                .get(definition.name())
                .and_then(|answer| answer.root_type.clone()),
            description: definition.description.clone(),
            deprecated: source.deprecated.contains(definition.name()),
        })
        .collect();
    let source_type = source::tokens(&source::SourceType {
        kind,
        input,
        name: &source.name,
        type_name: &type_name,
        data,
        data_file: source.catalog_file.as_deref(),
        methods: &methods,
        security,
    });
    let mut module = finish(input, Some(kind), typed, source_type);
    module.catalog = source.catalog_file.as_ref().map(|file| Catalog {
        file: file.clone(),
        json: format!("{data}\n"),
    });
    module
}
