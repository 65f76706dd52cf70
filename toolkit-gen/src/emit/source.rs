//! The source type of a generated module: one per document or snapshot, implementing
//! `ToolSource` over the runtime's own source (a `toolkit_http::HttpSource` of the document's
//! operations, a `toolkit_mcp::SnapshotSource` of the snapshot's tools), with one typed method
//! per tool.
//!
//! Everything a tool does is the source's: the operations or definitions are embedded as one JSON
//! constant, and each typed method is one call of `call_typed` (or `call_answered`), through the
//! module's `__tk` (see [`contract`]).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::rust::{docs, ident};

/// What kind of source a module's type wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An HTTP API: the operations an OpenAPI document was read into.
    Http,
    /// An MCP server known from a snapshot of its `tools/list`.
    Mcp,
}

/// The `codegen` module a generated module names as `__tk`: the one of the crate its source kind
/// lives in — `toolkit_http::codegen` for an HTTP source (OpenAPI documents, GraphQL schemas),
/// `toolkit_mcp::codegen` for a snapshot source — or, for a module of types without a source
/// (`kind` `None`), the core's contract alone. Each is `toolkit_core::codegen` with the source
/// beside it, so the crate that holds the module declares that one crate and nothing else.
pub(crate) fn contract(kind: Option<Kind>) -> TokenStream {
    match kind {
        Some(Kind::Http) => quote!(::toolkit_http::codegen),
        Some(Kind::Mcp) => quote!(::toolkit_mcp::codegen),
        None => quote!(::toolkit_core::codegen),
    }
}

/// One typed method: the tool it calls and the Rust names made for it.
#[derive(Debug)]
pub(crate) struct Method {
    /// The tool's name, as the source knows it.
    pub(crate) tool: String,
    /// The request it sends, for an HTTP operation: `GET /pets/{petId}`.
    pub(crate) request: Option<String>,
    /// The method's name (snake_case, unique among the type's methods).
    pub(crate) name: String,
    /// The input's type.
    pub(crate) input: String,
    /// The answer's type, when the tool declares an answer schema that has one (else the
    /// method returns `serde_json::Value`).
    pub(crate) answer: Option<String>,
    /// The tool's description.
    pub(crate) description: Option<String>,
    /// Whether the operation is deprecated (the method is `#[deprecated]`).
    pub(crate) deprecated: bool,
}

/// The source type of a module.
#[derive(Debug)]
pub(crate) struct SourceType<'a> {
    /// What the source wraps.
    pub(crate) kind: Kind,
    /// The file it was generated from, for its documentation.
    pub(crate) input: &'a str,
    /// The source's name, as an assembly prefixes its tools with.
    pub(crate) name: &'a str,
    /// The type's name.
    pub(crate) type_name: &'a str,
    /// The operations (HTTP) or definitions (MCP), as JSON.
    pub(crate) data: &'a str,
    /// The file beside the module that holds `data`, when it is not embedded.
    pub(crate) data_file: Option<&'a str>,
    /// The typed methods, in the tools' order.
    pub(crate) methods: &'a [Method],
    /// The document's security, for an HTTP source whose document declares schemes.
    pub(crate) security: Option<&'a Security>,
}

/// A document's security as a module embeds it.
#[derive(Debug)]
pub(crate) struct Security {
    /// `{"schemes": …, "requirements": …}`, as `HttpSourceBuilder::security_json` reads it.
    pub(crate) json: String,
    /// The schemes' names.
    pub(crate) schemes: Vec<String>,
}

/// The names a typed method may not take: the type's own methods and `ToolSource`'s (an inherent
/// method of the same name would hide the trait's).
pub(crate) const RESERVED_METHODS: &[&str] = &[
    "new",
    "configured",
    "with_credentials",
    "http",
    "stdio",
    "over",
    "definitions",
    "verify",
    "name",
    "discover",
    "call",
];

/// `json` as a raw string literal, with as many `#` as it needs: a readable diff when the document
/// changes. Text-direction controls, which rustc refuses in a literal, are written as JSON escapes
/// (they can stand only inside JSON strings, so the JSON means the same).
fn raw_string(json: &str) -> TokenStream {
    let escaped;
    let json = if json.contains(super::rust::is_direction_control) {
        escaped = json
            .chars()
            .map(|c| {
                if super::rust::is_direction_control(c) {
                    format!("\\u{:04x}", u32::from(c))
                } else {
                    c.to_string()
                }
            })
            .collect::<String>();
        escaped.as_str()
    } else {
        json
    };
    let mut hashes = 1;
    while json.contains(&format!("\"{}", "#".repeat(hashes))) {
        hashes += 1;
    }
    let fence = "#".repeat(hashes);
    format!("r{fence}\"{json}\"{fence}")
        .parse::<TokenStream>()
        .unwrap_or_else(|_| {
            // Unreachable for JSON (no bare carriage return); a plain literal is as good.
            let literal = Literal::string(json);
            quote!(#literal)
        })
}

/// The doc of a typed method: the tool it calls, then its description.
fn method_doc(method: &Method) -> String {
    let call = match &method.request {
        Some(request) => format!("`{request}`: the tool `{}`.", method.tool),
        None => format!("Calls the tool `{}`.", method.tool),
    };
    match method.description.as_deref().map(str::trim) {
        Some(description) if !description.is_empty() => format!("{call}\n\n{description}"),
        _ => call,
    }
}

fn methods(methods: &[Method]) -> TokenStream {
    let methods = methods.iter().map(|method| {
        let text = method_doc(method);
        let allows = super::lints::allows([Some(text.as_str())]);
        let doc = docs(Some(&text));
        let name = ident(&method.name);
        let input = ident(&method.input);
        let tool = &method.tool;
        let deprecated = method.deprecated.then(|| quote!(#[deprecated]));
        match &method.answer {
            Some(answer) => {
                let answer = ident(answer);
                quote! {
                    #allows
                    #doc
                    ///
                    /// # Errors
                    ///
                    /// The tool's failure, or an answer that does not fit its type.
                    #deprecated
                    pub async fn #name(&self, input: #input) -> __tk::Result<#answer> {
                        __tk::call_answered(&self.0, #tool, &input).await
                    }
                }
            }
            None => quote! {
                #allows
                #doc
                ///
                /// # Errors
                ///
                /// The tool's failure.
                #deprecated
                pub async fn #name(&self, input: #input) -> __tk::Result<__tk::serde_json::Value> {
                    __tk::call_typed(&self.0, #tool, &input).await
                }
            },
        }
    });
    quote!(#(#methods)*)
}

/// The `SECURITY` constant and the `with_credentials` constructor of an HTTP source whose
/// document declares security schemes.
fn security_tokens(security: &Security) -> TokenStream {
    let json = raw_string(&security.json);
    let names = security
        .schemes
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let doc = docs(Some(&format!(
        "[`Self::new`] with `credentials` for the document's security schemes:\n{names}.\n\n\
         Each operation carries those of the first of its requirements they meet, where its\n\
         scheme says (`toolkit_http::Credentials` gives fixed ones, or providers that\n\
         fetch and refresh tokens).\n\n# Errors\n\nAs [`Self::new`]."
    )));
    quote! {
        /// The document's security schemes and each operation's requirements, as
        /// `HttpSourceBuilder::security_json` reads them (give them in [`Self::configured`]
        /// with `builder.security_json(Self::SECURITY, credentials)`).
        pub const SECURITY: &'static str = #json;

        #doc
        pub fn with_credentials(
            base_url: &str,
            client: impl __tk::HttpClient,
            credentials: impl __tk::CredentialProvider,
        ) -> Result<Self, __tk::HttpSourceError> {
            Self::configured(base_url, client, |builder| {
                builder.security_json(Self::SECURITY, credentials)
            })
        }
    }
}

/// The tokens of the source type.
pub(crate) fn tokens(source: &SourceType<'_>) -> TokenStream {
    let type_name = ident(source.type_name);
    let name = source.name;
    let data = match source.data_file {
        Some(file) => quote!(::core::include_str!(#file)),
        None => raw_string(source.data),
    };
    let methods = methods(source.methods);
    let input = source.input;
    let source_impl = quote! {
        impl __tk::ToolSource for #type_name {
            fn name(&self) -> &str {
                __tk::ToolSource::name(&self.0)
            }

            fn discover(&self) -> __tk::BoxFuture<'_, __tk::Result<Vec<__tk::ToolDefinition>>> {
                __tk::ToolSource::discover(&self.0)
            }

            fn call<'a>(&'a self, tool: &'a str, input: __tk::JsonObject, context: &'a __tk::CallContext) -> __tk::BoxFuture<'a, __tk::Result<__tk::serde_json::Value>> {
                __tk::ToolSource::call(&self.0, tool, input, context)
            }

            fn call_outcome<'a>(&'a self, tool: &'a str, input: __tk::JsonObject, context: &'a __tk::CallContext) -> __tk::BoxFuture<'a, __tk::Outcome<__tk::ToolSourceError>> {
                __tk::ToolSource::call_outcome(&self.0, tool, input, context)
            }
        }
    };
    let name_doc = format!(
        " The source's name, which an assembly puts before its tools' names (`{name}__<tool>`)."
    );
    let security = source.security.map(security_tokens);
    match source.kind {
        Kind::Http => {
            let doc = docs(Some(&format!(
                "The operations of `{input}` as a tool source: an HTTP source that sends them to a \
                 base URL over a client the host builds (with its credentials).\n\n\
                 Its definitions are embedded: `discover` contacts nothing."
            )));
            let data_doc = format!(" The operations, as the runtime read them from `{input}`.");
            quote! {
                #doc
                #[derive(Debug)]
                pub struct #type_name(__tk::HttpSource);

                impl #type_name {
                    #[doc = #name_doc]
                    pub const NAME: &'static str = #name;

                    #[doc = #data_doc]
                    pub const OPERATIONS: &'static str = #data;

                    /// The source sending to `base_url` (such as `https://api.example.com/v1`)
                    /// over `client`.
                    ///
                    /// # Errors
                    ///
                    /// A base URL that is not `http` or `https`, or has a query or fragment.
                    pub fn new(
                        base_url: &str,
                        client: impl __tk::HttpClient,
                    ) -> Result<Self, __tk::HttpSourceError> {
                        Self::configured(base_url, client, |builder| builder)
                    }

                    /// [`Self::new`] with the source's options (a timeout, the longest answer)
                    /// set by `configure`.
                    ///
                    /// # Errors
                    ///
                    /// As [`Self::new`].
                    pub fn configured(
                        base_url: &str,
                        client: impl __tk::HttpClient,
                        configure: impl ::std::ops::FnOnce(__tk::HttpSourceBuilder) -> __tk::HttpSourceBuilder,
                    ) -> Result<Self, __tk::HttpSourceError> {
                        let builder = __tk::HttpSource::builder(Self::NAME, base_url, client)
                            .operations_json(Self::OPERATIONS);
                        configure(builder).build().map(Self)
                    }

                    #security

                    /// The tools' definitions, in the document's order. Contacts nothing.
                    pub fn definitions(&self) -> Vec<__tk::ToolDefinition> {
                        self.0.definitions()
                    }

                    #methods
                }

                #source_impl
            }
        }
        Kind::Mcp => {
            let doc = docs(Some(&format!(
                "The tools of the MCP snapshot `{input}` as a tool source: the server reached \
                 over Streamable HTTP or stdio, its tools known from the snapshot.\n\n\
                 `discover` reports the snapshot's tools and contacts nothing; [`Self::verify`] \
                 compares them with what the live server lists. A tool the server has beyond \
                 the snapshot is still called through this source: put the definitions of \
                 `verify`'s `added` in its assembly member, beside [`Self::definitions`]."
            )));
            let data_doc = format!(" The tools of the snapshot `{input}`, as definitions.");
            quote! {
                #doc
                #[derive(Debug)]
                pub struct #type_name(__tk::SnapshotSource);

                impl #type_name {
                    #[doc = #name_doc]
                    pub const NAME: &'static str = #name;

                    #[doc = #data_doc]
                    pub const TOOLS: &'static str = #data;

                    /// The Streamable HTTP server at `url`, reached with `client` (built by the
                    /// host, with its credentials).
                    ///
                    /// # Errors
                    ///
                    /// Embedded definitions that do not decode (a bug of toolkit-gen).
                    pub fn http(
                        url: __tk::reqwest::Url,
                        client: __tk::reqwest::Client,
                    ) -> Result<Self, __tk::CatalogError> {
                        Self::over(__tk::Mcp::http(Self::NAME, url, client))
                    }

                    /// The server that `command` starts, spoken to over its stdin and stdout.
                    ///
                    /// # Errors
                    ///
                    /// As [`Self::http`].
                    pub fn stdio(
                        command: __tk::StdioCommand,
                    ) -> Result<Self, __tk::CatalogError> {
                        Self::over(__tk::Mcp::stdio(Self::NAME, command))
                    }

                    /// The server `mcp`, made by the host (with options of its own); its name
                    /// names the source.
                    ///
                    /// # Errors
                    ///
                    /// As [`Self::http`].
                    pub fn over(
                        mcp: __tk::Mcp,
                    ) -> Result<Self, __tk::CatalogError> {
                        __tk::SnapshotSource::new(mcp, Self::TOOLS).map(Self)
                    }

                    /// The snapshot's tools, in its order. Contacts nothing.
                    pub fn definitions(&self) -> &[__tk::ToolDefinition] {
                        self.0.definitions()
                    }

                    /// Lists the live server's tools and compares them with the snapshot: tools
                    /// added, removed, changed (input schema, description, hints, title).
                    ///
                    /// # Errors
                    ///
                    /// The server's failure to list its tools.
                    pub async fn verify(&self) -> __tk::Result<__tk::SnapshotDrift> {
                        self.0.verify().await
                    }

                    #methods
                }

                #source_impl
            }
        }
    }
}
