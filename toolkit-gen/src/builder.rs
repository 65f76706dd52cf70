//! [`Builder`]: typed tool modules from `build.rs`, in the manner of `prost-build`.
//!
//! Each input — an OpenAPI document or an MCP snapshot — becomes one module file, `<name>.rs`,
//! in `OUT_DIR` (or the directory [`Builder::out_dir`] names): the input types of its tools and
//! one source type with a typed method per tool (over `toolkit-http`'s `HttpSource` or
//! `toolkit-mcp`'s `SnapshotSource`), and beside it `<name>.tools.json`, the source's catalog, which the
//! module reads with `include_str!` ([`catalog_file`]). The crate brings the module in with
//! `include!`:
//!
//! ```ignore
//! pub mod petstore {
//!     include!(concat!(env!("OUT_DIR"), "/petstore.rs"));
//! }
//! ```
//!
//! Every problem of every input is collected before anything fails, each located by file and
//! JSON pointer; nothing is written when there is one.
//!
//! Without generating, [`read_openapi`] and [`read_mcp_snapshot`] read an input as the builder
//! does, and [`openapi_typing`] and [`snapshot_typing`] tell how typed each tool's input would be
//! (what `toolkit-gen report` prints).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolkit_openapi::ReadOperations;

mod read;
mod typing;

use crate::emit::{
    Customizations, EmitOptions, SourceOptions, mcp_source_observed, openapi_source_observed,
};
#[cfg(feature = "graphql")]
use crate::inputs::read_graphql;
use crate::inputs::{read_openapi_for_module, read_snapshot, source_name};

pub use crate::emit::{
    AnswerType, Catalog, DEFAULT_MAX_TYPES, Matched, Module, Strictness, ToolTypes, Untyped,
};
pub use crate::problem::Problem;
pub use read::{ReadError, read_mcp_snapshot, read_openapi};
pub use typing::{openapi_typing, snapshot_typing};

/// What an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// An OpenAPI 3.0/3.1 or Swagger 2.0 document, JSON or YAML.
    OpenApi,
    /// An MCP `tools/list` snapshot: as `toolkit-gen snapshot` writes it, a bare
    /// `{"tools": [...]}` result, or a bare array of tools.
    McpSnapshot,
    /// A GraphQL schema (SDL, or an introspection result as JSON): a tool per root query and
    /// mutation field, as `toolkit-graphql` reads them. Read with feature `graphql` (which
    /// `Builder::graphql` needs); the variant is there either way, so that a `match` on it
    /// does not change with the features a build unifies.
    Graphql,
}

/// One input of a [`Builder`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Input {
    kind: InputKind,
    path: PathBuf,
}

/// A rule that keeps or leaves out tools.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Filter {
    /// An OpenAPI operation by its `operationId`.
    OperationId(String),
    /// An OpenAPI operation by one of its tags.
    Tag(String),
    /// Any tool whose name matches a glob (`*` any characters, `?` one).
    Glob(String),
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OperationId(id) => write!(f, "of the operation id `{id}`"),
            Self::Tag(tag) => write!(f, "of the tag `{tag}`"),
            Self::Glob(glob) => write!(f, "of the tools `{glob}`"),
        }
    }
}

impl Filter {
    /// Whether the rule can say anything of an input of `kind`.
    fn applies_to(&self, kind: InputKind) -> bool {
        kind == InputKind::OpenApi || matches!(self, Self::Glob(_))
    }

    fn matches(&self, tool: &Tagged<'_>) -> bool {
        match self {
            Self::OperationId(id) => tool.operation_id == Some(id.as_str()),
            Self::Tag(tag) => tool.tags.iter().any(|t| t == tag),
            Self::Glob(glob) => glob_matches(glob, tool.name),
        }
    }
}

/// A tool with what filters look at.
struct Tagged<'a> {
    name: &'a str,
    operation_id: Option<&'a str>,
    tags: Vec<String>,
}

/// Generates typed tool modules from OpenAPI documents and MCP snapshots, for `build.rs`.
///
/// Inputs accumulate; every other setter replaces what an earlier call set, except the filters
/// and renames, which accumulate too.
///
/// # Examples
///
/// In `build.rs` (with `toolkit-gen` under `[build-dependencies]`, and under `[dependencies]` the
/// crate of each source kind: `toolkit-http` for OpenAPI documents and GraphQL schemas,
/// `toolkit-mcp` for snapshots — nothing else):
///
/// ```no_run
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     toolkit_gen::Builder::new()
///         .openapi("specs/petstore.yaml")
///         .mcp_snapshot("specs/tasks.json")
///         .generate_to_out_dir()?;
///     Ok(())
/// }
/// ```
///
/// and in the crate:
///
/// ```ignore
/// pub mod petstore {
///     include!(concat!(env!("OUT_DIR"), "/petstore.rs"));
/// }
/// pub mod tasks {
///     include!(concat!(env!("OUT_DIR"), "/tasks.rs"));
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = toolkit_http::client_builder().build()?;
/// let petstore = petstore::Petstore::new("https://petstore.example.com/v1", client)?;
/// let pets = petstore.list_pets(petstore::ListPetsInput { limit: Some(10) }).await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder {
    inputs: Vec<Input>,
    module_names: BTreeMap<PathBuf, String>,
    /// The file each input's catalog is read from, beside its module, where not `NAME.tools.json`.
    catalog_files: BTreeMap<PathBuf, String>,
    include: Vec<Filter>,
    exclude: Vec<Filter>,
    renames: BTreeMap<String, String>,
    strictness: Strictness,
    max_name_length: Option<usize>,
    max_types: Option<usize>,
    out_dir: Option<PathBuf>,
    embed_catalog: bool,
    customizations: Customizations,
}

/// Which filters matched some tool: their indices in `include` and `exclude`.
#[derive(Debug, Default)]
struct UsedFilters {
    include: std::collections::BTreeSet<usize>,
    exclude: std::collections::BTreeSet<usize>,
}

/// A fixture document of this crate's tests, for the examples.
#[doc(hidden)]
pub const EXAMPLE_PETSTORE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/emit/fixtures/petstore.yaml"
);

/// A fixture snapshot of this crate's tests, for the examples.
#[doc(hidden)]
pub const EXAMPLE_TASKS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/emit/fixtures/tasks.json"
);

impl Builder {
    /// A builder with no inputs, strict structs, no filters, renames or name limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML). Its module and source are
    /// named after the file's stem in snake_case (`petstore.yaml` → `petstore.rs`, `Petstore`)
    /// unless [`Builder::module_name`] says otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new().openapi(petstore_yaml).modules()?;
    /// assert_eq!(modules[0].name, "petstore");
    /// assert!(modules[0].module.code.contains("pub struct Petstore("));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn openapi(mut self, path: impl Into<PathBuf>) -> Self {
        self.inputs.push(Input {
            kind: InputKind::OpenApi,
            path: path.into(),
        });
        self
    }

    /// Adds an MCP snapshot (as `toolkit-gen snapshot` writes it, a bare `{"tools": [...]}`
    /// result, or a bare array of tools), named as [`Builder::openapi`] names a document.
    ///
    /// # Examples
    ///
    /// ```
    /// # let tasks_json = toolkit_gen::builder::EXAMPLE_TASKS;
    /// let modules = toolkit_gen::Builder::new().mcp_snapshot(tasks_json).modules()?;
    /// assert!(modules[0].module.code.contains("pub struct Tasks("));
    /// assert!(modules[0].module.code.contains("pub async fn verify("));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn mcp_snapshot(mut self, path: impl Into<PathBuf>) -> Self {
        self.inputs.push(Input {
            kind: InputKind::McpSnapshot,
            path: path.into(),
        });
        self
    }

    /// Adds a GraphQL schema (SDL, or an introspection result as JSON; feature `graphql`): a tool
    /// per root query and mutation field, sent as GraphQL requests by `toolkit-http`'s HTTP source to the endpoint the
    /// generated source is given. Named as [`Builder::openapi`] names a document; only
    /// [`Builder::include_tools`]-style globs filter it. A generated source sends a `selection`
    /// unvalidated by this side (the server validates it; its braces are checked): wrap it in
    /// `toolkit_graphql::SelectionCheck` to refuse one before any request.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("toolkit-gen-graphql-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let schema = dir.join("users.graphql");
    /// std::fs::write(&schema, "type Query { user(login: String!): User } type User { name: String }")?;
    /// let modules = toolkit_gen::Builder::new().graphql(&schema).modules()?;
    /// assert!(modules[0].module.code.contains("pub struct Users("));
    /// assert!(modules[0].module.code.contains("pub async fn user("));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "graphql")]
    #[must_use]
    pub fn graphql(mut self, path: impl Into<PathBuf>) -> Self {
        self.inputs.push(Input {
            kind: InputKind::Graphql,
            path: path.into(),
        });
        self
    }

    /// Names the module of the input `path` (as given to [`Builder::openapi`] or
    /// [`Builder::mcp_snapshot`]): its file `<name>.rs`, the source's name `name` and its type's
    /// name, in UpperCamelCase.
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .module_name(petstore_yaml, "pets")
    ///     .modules()?;
    /// assert_eq!(modules[0].file, "pets.rs");
    /// assert!(modules[0].module.code.contains("pub struct Pets("));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn module_name(mut self, path: impl Into<PathBuf>, name: impl Into<String>) -> Self {
        self.module_names.insert(path.into(), name.into());
        self
    }

    /// Names the file beside the module of the input at `path` that its catalog is read from
    /// (`pets.tools.json` where the module is written as `pets.rs` whatever its name), instead
    /// of [`catalog_file`] of its name. Nothing changes with [`Builder::embed_catalog`].
    #[must_use]
    pub fn catalog_file_of(mut self, path: impl Into<PathBuf>, file: impl Into<String>) -> Self {
        self.catalog_files.insert(path.into(), file.into());
        self
    }

    /// Keeps the OpenAPI operation `operation_id` (calls accumulate). Once any `include_*` rule
    /// applies to an input, only the tools some rule keeps are generated; MCP snapshots have no
    /// operation ids, so this rule leaves them whole.
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .include_operation_id("listPets")
    ///     .modules()?;
    /// assert_eq!(modules[0].module.tools.len(), 1);
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn include_operation_id(mut self, operation_id: impl Into<String>) -> Self {
        self.include.push(Filter::OperationId(operation_id.into()));
        self
    }

    /// Leaves out the OpenAPI operation `operation_id` (calls accumulate).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .exclude_operation_id("blocking")
    ///     .modules()?;
    /// assert!(modules[0].module.tools.iter().all(|t| t.tool != "blocking"));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn exclude_operation_id(mut self, operation_id: impl Into<String>) -> Self {
        self.exclude.push(Filter::OperationId(operation_id.into()));
        self
    }

    /// Keeps the OpenAPI operations tagged `tag` (calls accumulate; see
    /// [`Builder::include_operation_id`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new().openapi(petstore_yaml).include_tag("pets").modules()?;
    /// let tools: Vec<&str> = modules[0].module.tools.iter().map(|t| t.tool.as_str()).collect();
    /// assert_eq!(tools, ["listPets", "createPets", "showPetById"]);
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn include_tag(mut self, tag: impl Into<String>) -> Self {
        self.include.push(Filter::Tag(tag.into()));
        self
    }

    /// Leaves out the OpenAPI operations tagged `tag` (calls accumulate).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new().openapi(petstore_yaml).exclude_tag("conformance").modules()?;
    /// assert_eq!(modules[0].module.tools.len(), 3);
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn exclude_tag(mut self, tag: impl Into<String>) -> Self {
        self.exclude.push(Filter::Tag(tag.into()));
        self
    }

    /// Keeps the tools, of any input, whose names match `glob` (`*` any characters, `?` one;
    /// calls accumulate; see [`Builder::include_operation_id`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # let tasks_json = toolkit_gen::builder::EXAMPLE_TASKS;
    /// let modules = toolkit_gen::Builder::new().mcp_snapshot(tasks_json).include_tools("*_task*").modules()?;
    /// let tools: Vec<&str> = modules[0].module.tools.iter().map(|t| t.tool.as_str()).collect();
    /// assert_eq!(tools, ["list_tasks", "add_task"]);
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn include_tools(mut self, glob: impl Into<String>) -> Self {
        self.include.push(Filter::Glob(glob.into()));
        self
    }

    /// Leaves out the tools, of any input, whose names match `glob` (calls accumulate).
    ///
    /// # Examples
    ///
    /// ```
    /// # let tasks_json = toolkit_gen::builder::EXAMPLE_TASKS;
    /// let modules = toolkit_gen::Builder::new().mcp_snapshot(tasks_json).exclude_tools("delete*").modules()?;
    /// assert_eq!(modules[0].module.tools.len(), 2);
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn exclude_tools(mut self, glob: impl Into<String>) -> Self {
        self.exclude.push(Filter::Glob(glob.into()));
        self
    }

    /// Makes the Rust names of the tool `tool` (its method and input type) from `rust_name`
    /// (calls accumulate). The tool keeps its name: a generated tool and the same tool
    /// discovered at run time are named alike.
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .rename("showPetById", "pet")
    ///     .modules()?;
    /// assert!(modules[0].module.code.contains("pub async fn pet("));
    /// assert!(modules[0].module.code.contains("pub struct PetInput"));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn rename(mut self, tool: impl Into<String>, rust_name: impl Into<String>) -> Self {
        self.renames.insert(tool.into(), rust_name.into());
        self
    }

    /// How closed the input structs are ([`Strictness::Strict`] unless set).
    ///
    /// # Examples
    ///
    /// ```
    /// # let tasks_json = toolkit_gen::builder::EXAMPLE_TASKS;
    /// use toolkit_gen::builder::Strictness;
    ///
    /// let modules = toolkit_gen::Builder::new()
    ///     .mcp_snapshot(tasks_json)
    ///     .strictness(Strictness::FollowSchema)
    ///     .modules()?;
    /// // `add_task` says nothing of other properties: its struct keeps them.
    /// assert!(modules[0].module.code.contains("#[serde(flatten)]"));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn strictness(mut self, strictness: Strictness) -> Self {
        self.strictness = strictness;
        self
    }

    /// The most characters of a tool's name its Rust names are made from, for documents with
    /// very long operation ids (no limit unless set; at least 1).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new().openapi(petstore_yaml).max_name_length(4).modules()?;
    /// assert!(modules[0].module.code.contains("pub async fn show("));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn max_name_length(mut self, characters: usize) -> Self {
        self.max_name_length = Some(characters);
        self
    }

    /// The most types a module may hold (default [`DEFAULT_MAX_TYPES`]): a document that needs
    /// more fails with an error naming the tool that passed the bound, instead of taking the
    /// machine's memory.
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let error = toolkit_gen::Builder::new().openapi(petstore_yaml).max_types(1).modules().unwrap_err();
    /// assert!(error.to_string().contains("more than 1 types"));
    /// ```
    #[must_use]
    pub fn max_types(mut self, types: usize) -> Self {
        self.max_types = Some(types);
        self
    }

    /// Makes every string, integer or number schema of `format` (`date-time`, `uuid`, …; a
    /// JSON Schema or OpenAPI format) the Rust type `rust_type` (a path the generated crate can
    /// name, such as `::chrono::DateTime<::chrono::Utc>`) instead of `String` or an integer
    /// type (calls accumulate; a later call for the same format replaces an earlier one). The
    /// type must serialize and deserialize as the format's JSON does.
    ///
    /// # Examples
    ///
    /// ```
    /// # let tasks_json = toolkit_gen::builder::EXAMPLE_TASKS;
    /// let modules = toolkit_gen::Builder::new()
    ///     .mcp_snapshot(tasks_json)
    ///     .replace_format("date", "crate::Day")
    ///     .modules()?;
    /// assert!(modules[0].module.code.contains("crate::Day"));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn replace_format(
        mut self,
        format: impl Into<String>,
        rust_type: impl Into<String>,
    ) -> Self {
        self.customizations
            .formats
            .insert(format.into(), rust_type.into());
        self
    }

    /// Makes the named schema `schema` (its name under `components.schemas` of an OpenAPI
    /// document, or under `$defs` of a tool's input schema) the Rust type `rust_type` wherever
    /// it is referred to, instead of a generated type (calls accumulate).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .replace_schema("Pet", "crate::models::Pet")
    ///     .modules()?;
    /// assert!(modules[0].module.code.contains("crate::models::Pet"));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn replace_schema(
        mut self,
        schema: impl Into<String>,
        rust_type: impl Into<String>,
    ) -> Self {
        self.customizations
            .schemas
            .insert(schema.into(), rust_type.into());
        self
    }

    /// Adds `attribute` (one or more outer attributes, `#[derive(Eq, Hash)]`) to every generated
    /// type whose name matches `glob` (`Pet`, `*Input`), after its derives (calls accumulate).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .type_attribute("*Input", "#[non_exhaustive]")
    ///     .modules()?;
    /// assert!(modules[0].module.code.contains("#[non_exhaustive]\npub struct ListPetsInput"));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn type_attribute(mut self, glob: impl Into<String>, attribute: impl Into<String>) -> Self {
        self.customizations
            .type_attributes
            .push((glob.into(), attribute.into()));
        self
    }

    /// Adds `attribute` to every field whose `Type.field` (Rust names) matches `glob`
    /// (`ListPetsInput.limit`, `*.id`) (calls accumulate).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let modules = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .field_attribute("ListPetsInput.limit", "#[doc(alias = \"count\")]")
    ///     .modules()?;
    /// assert!(modules[0].module.code.contains("#[doc(alias = \"count\")]\n    pub limit"));
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn field_attribute(
        mut self,
        glob: impl Into<String>,
        attribute: impl Into<String>,
    ) -> Self {
        self.customizations
            .field_attributes
            .push((glob.into(), attribute.into()));
        self
    }

    /// Where [`Builder::generate_to_out_dir`] writes (`OUT_DIR` unless set).
    ///
    /// # Examples
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let dir = std::env::temp_dir().join(format!("toolkit-gen-doc-{}", std::process::id()));
    /// let written = toolkit_gen::Builder::new()
    ///     .openapi(petstore_yaml)
    ///     .out_dir(&dir)
    ///     .generate_to_out_dir()?;
    /// assert_eq!(written[0].file, "petstore.rs");
    /// assert!(dir.join("petstore.rs").exists());
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Keeps each source's catalog inside its module (a raw string constant) rather than in
    /// `<name>.tools.json` beside it, which the module reads with `include_str!` (the default:
    /// GitHub's catalog is 2.75 MB of JSON a module would otherwise hold).
    ///
    /// ```
    /// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
    /// let beside = toolkit_gen::Builder::new().openapi(petstore_yaml).modules()?;
    /// assert!(beside[0].module.code.contains("include_str!(\"petstore.tools.json\")"));
    /// assert!(beside[0].module.catalog.is_some());
    /// let inside = toolkit_gen::Builder::new().openapi(petstore_yaml).embed_catalog(true).modules()?;
    /// assert!(inside[0].module.catalog.is_none());
    /// # Ok::<(), toolkit_gen::builder::GenerateError>(())
    /// ```
    #[must_use]
    pub fn embed_catalog(mut self, embed: bool) -> Self {
        self.embed_catalog = embed;
        self
    }

    /// Generates every input's module, in memory. Contacts nothing and writes nothing: a module
    /// whose [`Module::catalog`] is set reads that file from beside it (see
    /// [`Builder::embed_catalog`]), so whoever writes the module writes the catalog too.
    ///
    /// # Errors
    ///
    /// [`GenerateError`] with every problem of every input: a file that cannot be read, a
    /// document that is no OpenAPI 3 document, a snapshot tool that is no definition, two inputs
    /// of one module name.
    pub fn modules(&self) -> Result<Vec<GeneratedModule>, GenerateError> {
        self.modules_observed(&mut |_, _| {})
    }

    /// As [`Builder::modules`], `typed` told the name of each tool as its types are made, and
    /// how many tools its module has (a command line's progress).
    ///
    /// # Errors
    ///
    /// As [`Builder::modules`].
    pub fn modules_observed(
        &self,
        typed: &mut dyn FnMut(&str, usize),
    ) -> Result<Vec<GeneratedModule>, GenerateError> {
        let mut problems = self.setting_problems();
        let mut modules: Vec<GeneratedModule> = Vec::with_capacity(self.inputs.len());
        let options = EmitOptions {
            strictness: self.strictness,
            customizations: self.customizations.clone(),
            max_types: self.max_types.unwrap_or(DEFAULT_MAX_TYPES),
        };
        let mut used = UsedFilters::default();
        let mut matched = Matched::default();
        let mut tool_names = std::collections::BTreeSet::new();
        let mut unread = false;
        for input in &self.inputs {
            let name = self
                .module_names
                .get(&input.path)
                .cloned()
                .unwrap_or_else(|| source_name(&input.path));
            if let Some(other) = modules.iter().find(|m| m.name == name) {
                problems.push(Problem::new(
                    &input.path,
                    "#",
                    format!(
                        "its module is named `{name}`, as is the module of {}; name one with `module_name`",
                        other.input.display()
                    ),
                ));
                continue;
            }
            let mut source = SourceOptions::new(name.clone());
            source.renames.clone_from(&self.renames);
            source.max_name_length = self.max_name_length;
            source.catalog_file = (!self.embed_catalog).then(|| {
                self.catalog_files
                    .get(&input.path)
                    .cloned()
                    .unwrap_or_else(|| catalog_file(&name))
            });
            let label = label(&input.path);
            let mut skipped = Vec::new();
            let generated = match input.kind {
                InputKind::OpenApi => {
                    read_openapi_for_module(&input.path).map(|(document, mut read)| {
                        // An operation the filters leave out anyway is not worth a warning.
                        skipped = read
                            .skipped
                            .iter()
                            .filter(|s| !self.leaves_out(&document, s, &mut used))
                            .map(|s| {
                                Problem::new(
                                    &input.path,
                                    &s.location,
                                    format!("skipped: {}", s.reason),
                                )
                            })
                            .collect();
                        self.filter_operations(&document, &mut read, &mut used);
                        let mut source = source.clone();
                        source.deprecated = crate::inputs::deprecated_tools(&document, &read);
                        let tools = read.operations.len();
                        openapi_source_observed(&label, &read, &source, &options, &mut |tool| {
                            typed(tool, tools);
                        })
                    })
                }
                #[cfg(feature = "graphql")]
                InputKind::Graphql => read_graphql(&input.path).map(|(mut read, skips)| {
                    skipped = skips
                        .iter()
                        .map(|s| {
                            Problem::new(&input.path, &s.location, format!("skipped: {}", s.reason))
                        })
                        .collect();
                    read.operations.retain(|operation| {
                        self.keeps(
                            InputKind::Graphql,
                            &Tagged {
                                name: operation.name(),
                                operation_id: None,
                                tags: Vec::new(),
                            },
                            &mut used,
                        )
                    });
                    let tools = read.operations.len();
                    openapi_source_observed(&label, &read, &source, &options, &mut |tool| {
                        typed(tool, tools);
                    })
                }),
                // Only `Builder::graphql` makes such an input, and it needs the feature.
                #[cfg(not(feature = "graphql"))]
                InputKind::Graphql => Err(vec![Problem::new(
                    &input.path,
                    "#",
                    "GraphQL schemas need the feature `graphql` of toolkit-gen",
                )]),
                InputKind::McpSnapshot => read_snapshot(&input.path).map(|mut definitions| {
                    definitions.retain(|d| {
                        self.keeps(
                            InputKind::McpSnapshot,
                            &Tagged {
                                name: d.name(),
                                operation_id: None,
                                tags: Vec::new(),
                            },
                            &mut used,
                        )
                    });
                    let tools = definitions.len();
                    mcp_source_observed(&label, &definitions, &source, &options, &mut |tool| {
                        typed(tool, tools);
                    })
                }),
            };
            match generated {
                Ok(module) => {
                    for error in &module.errors {
                        problems.push(Problem::new(&input.path, "#", error.clone()));
                    }
                    matched.merge(&module.matched);
                    tool_names.extend(module.tools.iter().map(|t| t.tool.clone()));
                    modules.push(GeneratedModule {
                        file: format!("{name}.rs"),
                        source_type: crate::emit::source_type_name(&name),
                        name,
                        input: input.path.clone(),
                        module,
                        skipped,
                    });
                }
                Err(found) => {
                    unread = true;
                    problems.extend(found);
                }
            }
        }
        if !unread {
            // Settings that matched nothing, told only when every input was read (an input
            // that failed would have matched them, perhaps).
            problems.extend(self.unmatched(&used, &matched, &tool_names));
        }
        if problems.is_empty() {
            Ok(modules)
        } else {
            Err(GenerateError { problems, unread })
        }
    }

    /// The problems of the settings themselves: type replacements and attributes that are not
    /// Rust, unknown formats, module names that cannot name a module.
    fn setting_problems(&self) -> Vec<Problem> {
        let settings = Path::new("Builder");
        let mut problems: Vec<Problem> = self
            .customizations
            .check()
            .into_iter()
            .map(|problem| Problem::new(settings, "#", problem))
            .collect();
        for (path, name) in &self.module_names {
            if source_name(Path::new(&format!("{name}.rs"))) != *name {
                problems.push(Problem::new(
                    path,
                    "#",
                    format!(
                        "the module name `{name}` cannot name a module (snake_case letters and digits, no keyword)"
                    ),
                ));
            }
        }
        problems
    }

    /// Every filter, rename, module name and customization that matched nothing.
    fn unmatched(
        &self,
        used: &UsedFilters,
        matched: &Matched,
        tool_names: &std::collections::BTreeSet<String>,
    ) -> Vec<Problem> {
        let settings = Path::new("Builder");
        let mut problems = Vec::new();
        for (rules, used, verb) in [
            (&self.include, &used.include, "include"),
            (&self.exclude, &used.exclude, "exclude"),
        ] {
            for (index, filter) in rules.iter().enumerate() {
                if !used.contains(&index) {
                    problems.push(Problem::new(
                        settings,
                        "#",
                        format!("the {verb} filter {filter} matches no tool of any input"),
                    ));
                }
            }
        }
        for tool in self.renames.keys() {
            if !tool_names.contains(tool) {
                problems.push(Problem::new(
                    settings,
                    "#",
                    format!("the rename of `{tool}` matches no tool generated"),
                ));
            }
        }
        for path in self.module_names.keys() {
            if !self.inputs.iter().any(|input| &input.path == path) {
                problems.push(Problem::new(
                    path,
                    "#",
                    "a module name is given for this file, which is no input",
                ));
            }
        }
        problems.extend(
            matched
                .unused(&self.customizations)
                .into_iter()
                .map(|problem| Problem::new(settings, "#", problem)),
        );
        problems
    }

    /// Generates every input's module and writes it to `<out_dir>/<name>.rs`, printing
    /// `cargo:rerun-if-changed` for each input and a `cargo:warning` for each OpenAPI operation
    /// that is no tool (so that none is left out unseen).
    ///
    /// # Errors
    ///
    /// As [`Builder::modules`]; also no `out_dir` and no `OUT_DIR`, or a file that cannot be
    /// written.
    pub fn generate_to_out_dir(&self) -> Result<Vec<GeneratedModule>, GenerateError> {
        for input in &self.inputs {
            println!("cargo:rerun-if-changed={}", input.path.display());
        }
        let dir = match (&self.out_dir, std::env::var_os("OUT_DIR")) {
            (Some(dir), _) => dir.clone(),
            (None, Some(dir)) => PathBuf::from(dir),
            (None, None) => {
                return Err(GenerateError {
                    problems: vec![Problem::new(
                        Path::new("OUT_DIR"),
                        "#",
                        "no `out_dir` was set and `OUT_DIR` is not (run from build.rs)",
                    )],
                    unread: false,
                });
            }
        };
        let modules = self.modules()?;
        let mut problems = Vec::new();
        if let Err(error) = std::fs::create_dir_all(&dir) {
            problems.push(Problem::new(&dir, "#", format!("cannot create: {error}")));
        }
        for module in &modules {
            for skipped in &module.skipped {
                println!("cargo:warning={}", skipped.to_string().replace('\n', " "));
            }
            let catalog = module.module.catalog.as_ref();
            let files = std::iter::once((&module.file, &module.module.code))
                .chain(catalog.map(|catalog| (&catalog.file, &catalog.json)));
            for (file, text) in files {
                let path = dir.join(file);
                // Unchanged files are left alone, so that cargo does not rebuild for nothing.
                if std::fs::read_to_string(&path).is_ok_and(|old| old == *text) {
                    continue;
                }
                if let Err(error) = std::fs::write(&path, text) {
                    problems.push(Problem::new(&path, "#", format!("cannot write: {error}")));
                }
            }
        }
        if problems.is_empty() {
            Ok(modules)
        } else {
            Err(GenerateError {
                problems,
                unread: false,
            })
        }
    }

    /// Whether the rules keep `tool` of an input of `kind`; the rules that match it are
    /// recorded in `used`.
    fn keeps(&self, kind: InputKind, tool: &Tagged<'_>, used: &mut UsedFilters) -> bool {
        let mut applies = false;
        let mut included = false;
        for (index, filter) in self.include.iter().enumerate() {
            if filter.applies_to(kind) {
                applies = true;
                if filter.matches(tool) {
                    used.include.insert(index);
                    included = true;
                }
            }
        }
        let mut excluded = false;
        for (index, filter) in self.exclude.iter().enumerate() {
            if filter.applies_to(kind) && filter.matches(tool) {
                used.exclude.insert(index);
                excluded = true;
            }
        }
        (included || !applies) && !excluded
    }

    /// Leaves out of `read` the operations the rules do not keep, telling them by the tags and
    /// operation ids of `document`.
    fn filter_operations(
        &self,
        document: &Value,
        read: &mut ReadOperations,
        used: &mut UsedFilters,
    ) {
        if self.include.is_empty() && self.exclude.is_empty() {
            return;
        }
        read.operations.retain(|operation| {
            let path = operation.request.path.split('?').next().unwrap_or_default();
            let (operation_id, tags) = tags_of(document, path, &operation.request.method);
            self.keeps(
                InputKind::OpenApi,
                &Tagged {
                    name: operation.name(),
                    operation_id,
                    tags,
                },
                used,
            )
        });
    }

    /// Whether the filters leave out `skipped` (an operation the reader did not make a tool),
    /// told by its tags and operation id (its name, for a glob, is its operation id). A filter
    /// that matches it counts as used: it names an operation of the document.
    fn leaves_out(
        &self,
        document: &Value,
        skipped: &toolkit_openapi::Skipped,
        used: &mut UsedFilters,
    ) -> bool {
        if self.include.is_empty() && self.exclude.is_empty() {
            return false;
        }
        let (operation_id, tags) = tags_of(document, &skipped.path, &skipped.method);
        let tagged = Tagged {
            name: operation_id.unwrap_or_default(),
            operation_id,
            tags,
        };
        !self.keeps(InputKind::OpenApi, &tagged, used)
    }
}

/// The operation id and tags `document` gives the operation `method` of `path`.
fn tags_of<'a>(document: &'a Value, path: &str, method: &str) -> (Option<&'a str>, Vec<String>) {
    let entry = document
        .get("paths")
        .and_then(|paths| paths.get(path))
        .and_then(|item| item.get(method.to_ascii_lowercase()));
    let tags = entry
        .and_then(|e| e.get("tags"))
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let operation_id = entry
        .and_then(|e| e.get("operationId"))
        .and_then(Value::as_str);
    (operation_id, tags)
}

/// The file beside the module `name` that holds its source's catalog (`petstore.tools.json`).
pub fn catalog_file(name: &str) -> String {
    format!("{name}.tools.json")
}

/// The module generated from one input.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedModule {
    /// The module's name (`petstore`), also the source's name.
    pub name: String,
    /// Its file name (`petstore.rs`).
    pub file: String,
    /// The name of its source type (`Petstore`).
    pub source_type: String,
    /// The input it was generated from.
    pub input: PathBuf,
    /// The code, what each tool's input became, and the catalog to write beside it
    /// ([`catalog_file`]).
    pub module: Module,
    /// The operations of an OpenAPI document that are no tools (a body neither JSON nor a form,
    /// a cookie parameter, …), each located, as the runtime's reader skipped them; empty for a
    /// snapshot.
    pub skipped: Vec<Problem>,
}

/// Why a [`Builder`] generated nothing: every problem of every input.
///
/// Its `Debug` is its `Display` (a line per problem, located), so that a `build.rs` whose `main`
/// returns it with `?` shows cargo a readable list.
#[derive(Clone, PartialEq, Eq)]
pub struct GenerateError {
    problems: Vec<Problem>,
    /// Whether an input could not be read (rather than its module made).
    unread: bool,
}

impl fmt::Debug for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl GenerateError {
    /// Each problem, located.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Whether an input could not be read (a file, a document, a snapshot), rather than only its
    /// module made (a type bound passed, a setting that matched nothing).
    pub fn unread(&self) -> bool {
        self.unread
    }
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "toolkit-gen generated nothing:")?;
        for problem in &self.problems {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for GenerateError {}

/// The name a generated header gives an input: its file name (`specs/petstore.yaml` →
/// `petstore.yaml`).
pub fn label(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// Whether `name` matches `glob` as a shell matches a file name (`*` any characters, none
/// included, `?` one, `[a-z]` a class), by `globset`; a pattern that is no glob (an unclosed
/// `[`) matches only itself.
fn glob_matches(glob: &str, name: &str) -> bool {
    match globset::Glob::new(glob) {
        Ok(glob) => glob.compile_matcher().is_match(name),
        Err(_) => glob == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_shells_do() {
        for (glob, name, matches) in [
            ("*", "", true),
            ("*", "list_pets", true),
            ("list_*", "list_pets", true),
            ("list_*", "get_pet", false),
            ("*_pet?", "list_pets", true),
            ("*_pet?", "list_pet", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("**", "x", true),
            ("[unclosed", "[unclosed", true),
        ] {
            assert_eq!(glob_matches(glob, name), matches, "{glob} {name}");
        }
    }

    /// A directory of the test `test` holding the document `file` of `text`: (its directory, the
    /// document).
    fn document(test: &str, file: &str, text: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("toolkit-gen-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let document = dir.join(file);
        std::fs::write(&document, text).unwrap_or_default();
        (dir, document)
    }

    #[test]
    fn a_module_named_as_a_prelude_type_names_its_source_type_as_the_module_does() {
        let text = r#"{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{
            "get":{"operationId":"get_a","responses":{}}}}}"#;
        let (dir, document) = document("prelude", "result.json", text);
        let modules = Builder::new()
            .openapi(&document)
            .modules()
            .unwrap_or_default();
        assert_eq!(modules.len(), 1);
        assert_eq!(modules[0].source_type, "Result2");
        assert!(
            modules[0]
                .module
                .code
                .contains("pub struct Result2(__tk::HttpSource);")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn operations_that_are_no_tools_are_reported_not_dropped_unseen() {
        let text = r#"{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/photo":{
            "get":{"operationId":"get_photo","responses":{}},
            "put":{"operationId":"put_photo","requestBody":{"content":{"image/png":{}}},"responses":{}}}}}"#;
        let (dir, document) = document("skipped", "photos.json", text);
        let out = dir.join("out");
        let modules = Builder::new()
            .openapi(&document)
            .out_dir(&out)
            .generate_to_out_dir()
            .unwrap_or_default();
        assert_eq!(modules.len(), 1);
        assert_eq!(modules[0].module.tools.len(), 1);
        assert_eq!(modules[0].skipped.len(), 1);
        assert_eq!(modules[0].skipped[0].pointer, "#/paths/~1photo/put");
        assert!(modules[0].skipped[0].message.starts_with("skipped: "));
        assert!(out.join("photos.rs").exists());

        // One the filters leave out anyway is no warning; one they keep still is.
        let left_out = Builder::new()
            .openapi(&document)
            .exclude_operation_id("put_photo")
            .modules()
            .unwrap_or_default();
        assert_eq!(left_out.first().map(|module| module.skipped.len()), Some(0));
        let kept = Builder::new()
            .openapi(&document)
            .include_operation_id("put_photo")
            .include_operation_id("get_photo")
            .modules()
            .unwrap_or_default();
        assert_eq!(kept.first().map(|module| module.skipped.len()), Some(1));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn problems_are_collected_and_located() {
        let dir = std::env::temp_dir().join(format!("toolkit-gen-builder-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let bad = dir.join("bad.json");
        std::fs::write(
            &bad,
            r#"{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":""}]}"#,
        )
        .unwrap_or_default();
        let missing = dir.join("missing.yaml");
        let error = Builder::new()
            .mcp_snapshot(&bad)
            .openapi(&missing)
            .modules()
            .err()
            .unwrap_or(GenerateError {
                problems: vec![],
                unread: false,
            });
        let problems = error.problems();
        assert_eq!(problems.len(), 2, "{error}");
        assert_eq!(problems[0].pointer, "#/tools/1");
        assert_eq!(problems[1].file, missing);
        assert!(
            error.to_string().contains("bad.json: #/tools/1: "),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_inputs_and_settings_fail_generate_to_out_dir_located_and_write_nothing() {
        let dir = std::env::temp_dir().join(format!("toolkit-gen-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let not_openapi = dir.join("compose.yaml");
        std::fs::write(&not_openapi, "services:\n  web:\n    image: nginx\n").unwrap_or_default();
        let not_a_listing = dir.join("listing.json");
        std::fs::write(&not_a_listing, r#"{"result":{"content":[]}}"#).unwrap_or_default();
        let missing = dir.join("missing.json");
        let out = dir.join("out");
        let error = Builder::new()
            .openapi(&not_openapi)
            .mcp_snapshot(&not_a_listing)
            .mcp_snapshot(&missing)
            .replace_format("date-tiem", "String")
            .out_dir(&out)
            .generate_to_out_dir()
            .err()
            .unwrap_or(GenerateError {
                problems: vec![],
                unread: false,
            });
        let text = error.to_string();
        let located = |file: &Path| error.problems().iter().any(|p| p.file == file);
        assert!(located(&not_openapi), "{text}");
        assert!(located(&not_a_listing), "{text}");
        assert!(located(&missing), "{text}");
        assert!(
            text.contains("Builder: #: the format `date-tiem` of a type replacement"),
            "{text}"
        );
        assert!(error.problems().iter().all(|p| p.pointer.starts_with('#')));
        // `Debug` reads as `Display`, for a `build.rs` whose `main` returns the error.
        assert_eq!(format!("{error:?}"), text);
        assert!(!out.join("compose.rs").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
