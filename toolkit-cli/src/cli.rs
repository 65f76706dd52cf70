//! The `toolkit-gen` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use toolkit_gateway::process::{self, ServeArgs};

// A file per subcommand, named after it (`crate` in `krate.rs`; `openapi`, `graphql` and `mcp`,
// which write one module, in `module.rs`; `serve` is the gateway's own process,
// `toolkit_gateway::process`, which the `toolkit-gateway` binary runs too)…
pub mod audit;
pub mod call;
pub mod check;
pub mod connections;
pub mod execute;
pub mod krate;
pub mod login;
pub mod module;
pub mod report;
pub mod search;
pub mod secrets;
pub mod snapshot;
// …and a file per piece several of them share, named after what it is.
pub mod credentials;
#[cfg(test)]
pub mod fixtures;
pub mod format;
pub mod graphql_schema;
pub mod headers;
pub mod mcp_server;
pub mod openapi_source;
pub mod progress;
pub mod source;
pub mod strictness;

/// Generates typed tool modules and inspects the documents tools come from.
#[derive(Debug, Parser)]
#[command(name = "toolkit-gen", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// A `toolkit-gen` subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runtime catalogs: checks a catalog of tool definitions, entry by entry.
    ///
    /// Reads a catalog of tool definitions (a JSON array) and reports every entry that is no
    /// definition; prints the tools' names when all are.
    CheckCatalog {
        /// The catalog file.
        file: PathBuf,
    },
    /// Generator: reports which operations or tools become tools, and how typed each input is.
    ///
    /// Reads an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML) and prints the operations
    /// read as tools and the ones skipped, each with its reason and location, or the tools of an
    /// MCP snapshot; each with whether its input is fully typed in the generated code and the
    /// JSON pointers that are not.
    Report {
        /// The document: OpenAPI 3.x, Swagger 2.0, or a Google Discovery document
        /// (`--discovery`, an alias: the kind is read from the content).
        #[arg(
            long,
            visible_alias = "discovery",
            required_unless_present_any = ["mcp", "graphql"],
            conflicts_with_all = ["mcp", "graphql"]
        )]
        openapi: Option<PathBuf>,
        /// A GraphQL schema (SDL, or an introspection result as JSON), or an endpoint's
        /// `https://` URL whose schema is introspected: a tool per root query and mutation field,
        /// or per named operation of `--operations`.
        #[arg(long, value_name = "SCHEMA", conflicts_with = "mcp")]
        graphql: Option<PathBuf>,
        /// With a `--graphql` URL: a header sent with the introspection, as `Name: value`
        /// (repeatable); for credentials.
        #[arg(long = "header", value_name = "'NAME: VALUE'", requires = "graphql")]
        headers: Vec<String>,
        /// With `--graphql`: `.graphql` files (or persisted-query manifests) whose named
        /// operations are the tools (repeatable).
        #[arg(long, value_name = "FILE", requires = "graphql")]
        operations: Vec<PathBuf>,
        /// An MCP snapshot (as `toolkit-gen snapshot` writes it, a bare `{"tools": [...]}`
        /// result, or a bare array of tools).
        #[arg(long)]
        mcp: Option<PathBuf>,
        /// `json` (a stable shape, for scripts) or `text` (for people).
        #[arg(long, value_enum, default_value_t)]
        format: format::Format,
    },
    /// MCP: audits a `tools/list` for what clients, model APIs and this runtime refuse.
    ///
    /// Audits an MCP `tools/list` (a snapshot, a bare result or an array of tools) for what
    /// clients, model APIs and this runtime refuse, drop or rename; exits 1 when a finding is as
    /// severe as `--deny` (errors by default), 2 when the listing cannot be read (docs/audit.md
    /// says what each finding means).
    Audit(audit::AuditArgs),
    /// Tool search: searches a catalog as the runtime's `tool_search` does.
    ///
    /// Searches a catalog of tool definitions as `tool_search` does, printing its JSON: one
    /// result, or one line per query of `--queries`.
    Search {
        /// The catalog (a JSON array of tool definitions).
        #[arg(long)]
        catalog: PathBuf,
        /// The query.
        #[arg(required_unless_present = "queries", conflicts_with = "queries")]
        query: Option<String>,
        /// A file of queries, one per line.
        #[arg(long)]
        queries: Option<PathBuf>,
        /// How many tools a result lists (5 by default, at most 20).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=20))]
        limit: Option<u64>,
    },
    /// Tool search: distills static token vectors from a sentence-embedding model.
    ///
    /// Distills static token vectors from a sentence-embedding model (feature
    /// `search-embeddings`): a file that `serve.search_model` takes, for searches by meaning in
    /// microseconds a query. Runs the model once per token of its vocabulary (about 30 s).
    #[cfg(feature = "search-embeddings")]
    Distill {
        /// The model's directory (`config.json`, `model.safetensors`, `vocab.txt`).
        model: PathBuf,
        /// The file to write (safetensors).
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
    /// MCP source: writes the tools a server lists as a snapshot for the generator.
    ///
    /// Writes the tools an MCP server lists as a snapshot: `{"server", "protocolVersion",
    /// "tools"}`, the tools exactly as listed, all pages.
    Snapshot(snapshot::SnapshotArgs),
    /// Generator: writes the typed tools of an OpenAPI document as one Rust module.
    ///
    /// Writes the input types of every operation of an OpenAPI document (or of a Google
    /// Discovery document: `toolkit-gen discovery DOC` is the same command) as one Rust module.
    #[command(visible_alias = "discovery")]
    Openapi(module::GenerateArgs),
    /// Generator: writes the typed tools of a GraphQL schema as one Rust module.
    ///
    /// Writes the input types of every root query and mutation field of a GraphQL schema (SDL,
    /// or an introspection result as JSON) as one Rust module; the source it defines sends each
    /// query to the endpoint it is built with.
    Graphql(module::GenerateArgs),
    /// Generator: writes the typed tools of an MCP snapshot as one Rust module.
    ///
    /// Writes the input types of every tool of an MCP snapshot as one Rust module.
    Mcp(module::GenerateArgs),
    /// Generator: writes a whole crate of typed tools to commit.
    ///
    /// Writes a whole crate of typed tools to commit: Cargo.toml, src/lib.rs, a module per
    /// input, README.md
    Crate {
        /// The inputs and the crate's shape.
        #[command(flatten)]
        args: krate::CrateArgs,
        /// The crate's directory
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
    },
    /// Generator: checks that a committed generated crate is what `crate` writes today.
    ///
    /// Checks that a committed generated crate is what `crate` writes today: exit 0 when fresh,
    /// 1 with a summary of what differs when stale. The arguments `crate` was given are read
    /// from the crate's `Cargo.toml` unless given again
    Check {
        /// The inputs and the crate's shape, as given to `crate` (read from the crate when
        /// absent).
        #[command(flatten)]
        args: krate::CrateArgs,
        /// The committed crate's directory
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Runtime sources: runs one tool of an OpenAPI document or an MCP server.
    ///
    /// Runs one tool: an operation of an OpenAPI document (`--openapi DOC --base-url URL`) or a
    /// tool of an MCP server (`--mcp-url URL` or `--mcp-stdio 'CMD'`). Prints the result JSON on
    /// stdout and exits 0, or the failure as `{code, message, retryable}` JSON on stdout and
    /// exits 1.
    Call {
        /// The tools: `--openapi DOC --base-url URL`, `--mcp-url URL` or `--mcp-stdio 'CMD'`.
        #[command(flatten)]
        source: source::SourceArgs,
        /// How long an OpenAPI operation may take, in milliseconds.
        #[arg(long, default_value_t = 30_000)]
        timeout_ms: u64,
        /// The operation's name (its operationId), or the MCP tool's name.
        name: String,
        /// The input, a JSON object (`{}` when left out).
        input: Option<String>,
    },
    /// Authorization: logs in at an MCP server ahead of time (OAuth 2.1), into a token store.
    ///
    /// Authorizes at an MCP server ahead of time, as the MCP authorization specification has it
    /// (OAuth 2.1: the user sent to the authorization URL, the redirect received on
    /// 127.0.0.1), keeping the tokens in the token store that `call`, `execute` and `snapshot`
    /// read; `--logout` forgets them.
    Login(login::LoginArgs),
    /// Gateway: keeps each person's own credential for a source (`per_person`).
    ///
    /// Sets, removes and lists the credentials a gateway's source with `per_person` uses for each
    /// person's calls, in its sealed secrets file; a value is read from standard input.
    Secrets(secrets::SecretsArgs),
    /// Gateway: lists and revokes the accounts people connected to a source (`oauth.per_person`).
    ///
    /// Lists who connected their own account to a gateway's source through the gateway (never a
    /// token), and revokes a person's connection, so that their next call asks them to connect
    /// again.
    Connections(connections::ConnectionsArgs),
    /// Gateway: serves the sources a configuration names as one MCP server.
    ///
    /// Serves the sources a configuration names, under its policy, as one MCP server (stdio or
    /// Streamable HTTP), as the `toolkit-gateway` binary does.
    #[command(
        after_help = process::CONFIG_HELP,
        override_usage = "toolkit-gen serve --config <FILE> [--log-format <LOG_FORMAT>]\n       \
                                toolkit-gen serve --example-config"
    )]
    Serve(ServeArgs),
    /// Serves one code-mode run as a worker process of `toolkit_runtime::code::WorkerIsolate` (JSON
    /// lines on standard input and output); not for people.
    #[command(hide = true)]
    QuickjsWorker,
    /// Code mode: runs model-style JavaScript against the tools of a source.
    ///
    /// Runs model-style code (the body of an async JavaScript function that calls
    /// `await tools.<name>(input)`) in the isolate that ships, against the tools of the source
    /// given as for `call` (none given: no tools). Prints `{result, logs}` and exits 0, or the
    /// failure JSON and exits 1.
    Execute {
        /// The tools the code may call.
        #[command(flatten)]
        source: source::SourceArgs,
        /// How long the run may take, its tool calls counted in, in milliseconds.
        #[arg(long, default_value_t = 60_000)]
        timeout_ms: u64,
        /// The file that holds the code, or `-` for standard input.
        #[arg(long)]
        code: String,
    },
}

impl Cli {
    /// Runs the command, printing results on stdout and problems on stderr.
    pub fn run(self) -> ExitCode {
        match self.command {
            Command::CheckCatalog { file } => check_catalog(&file),
            Command::Search {
                catalog,
                query,
                queries,
                limit,
            } => {
                let queries = match (&query, &queries) {
                    (_, Some(file)) => search::Queries::File(file),
                    (Some(query), None) => search::Queries::One(query),
                    (None, None) => search::Queries::One(""),
                };
                search::search(
                    &catalog,
                    queries,
                    limit,
                    &mut std::io::stdout().lock(),
                    &mut std::io::stderr().lock(),
                )
            }
            #[cfg(feature = "search-embeddings")]
            Command::Distill { model, output } => search::distill(&model, &output),
            Command::Report {
                openapi,
                graphql,
                headers,
                operations,
                mcp,
                format,
            } => report::report(
                match (&graphql, &openapi, &mcp) {
                    (Some(schema), _, _) => report::ReportInput::Graphql {
                        schema,
                        operations: &operations,
                        headers: &headers,
                    },
                    (None, Some(file), _) => report::ReportInput::OpenApi(file),
                    (None, None, Some(file)) => report::ReportInput::Mcp(file),
                    (None, None, None) => report::ReportInput::OpenApi(std::path::Path::new("")),
                },
                format,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
            Command::Audit(arguments) => audit::run(
                &arguments,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
            Command::Snapshot(arguments) => snapshot::snapshot(&arguments),
            Command::Openapi(arguments) => module::openapi(
                &arguments,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
            Command::Graphql(arguments) => module::graphql(
                &arguments,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
            Command::Mcp(arguments) => module::mcp(
                &arguments,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
            Command::Crate { args, output } => krate::write_crate(
                &args,
                &output,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
            Command::Check { args, dir } => check::check(
                Some(&args).filter(|args| args.has_inputs()),
                &dir,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
            Command::Call {
                source,
                timeout_ms,
                name,
                input,
            } => call::call(
                &source,
                std::time::Duration::from_millis(timeout_ms),
                &name,
                input.as_deref(),
                // Not locked for the call: an MCP server's OAuth may tell the person where to
                // go on stderr from another thread while it runs.
                &mut std::io::stdout(),
                &mut std::io::stderr(),
            ),
            Command::Login(arguments) => login::login(&arguments),
            Command::Serve(arguments) => arguments.run("toolkit-gen serve"),
            Command::Secrets(arguments) => secrets::run(arguments),
            Command::Connections(arguments) => connections::run(arguments),
            Command::QuickjsWorker => quickjs_worker(),
            Command::Execute {
                source,
                timeout_ms,
                code,
            } => execute::execute(&source, &code, std::time::Duration::from_millis(timeout_ms)),
        }
    }
}

fn check_catalog(file: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("toolkit-gen: cannot read {}: {error}", file.display());
            return ExitCode::FAILURE;
        }
    };
    match toolkit_runtime::definition::decode_catalog(&text) {
        Ok(definitions) => {
            for definition in &definitions {
                println!("{}", definition.name());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            for problem in error.problems() {
                eprintln!("toolkit-gen: {}: {problem}", file.display());
            }
            ExitCode::FAILURE
        }
    }
}

fn quickjs_worker() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let served = runtime.map(|runtime| {
        runtime.block_on(toolkit_runtime::code::serve_worker(
            toolkit_runtime::code::QuickJsOptions::default(),
        ))
    });
    match served {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) | Err(error) => {
            eprintln!("toolkit-gen quickjs-worker: {error}");
            ExitCode::FAILURE
        }
    }
}
