//! Typed tools generated at build time by `toolkit_gen::Builder` (see `build.rs`): each module
//! holds the strict input types of its tools and one source type, a `ToolSource` with a typed
//! method per tool, over `toolkit-http`'s source (the Petstore, the GraphQL API) or
//! `toolkit-mcp`'s (the snapshot).

/// The Swagger Petstore (`specs/petstore.yaml`): `Petstore::new(base_url, client)`.
pub mod petstore {
    include!(concat!(env!("OUT_DIR"), "/petstore.rs"));
}

/// A task server known from a snapshot of its `tools/list` (`specs/tasks.json`):
/// `Tasks::http(url, client)`, and `verify()` against the live server.
pub mod tasks {
    include!(concat!(env!("OUT_DIR"), "/tasks.rs"));
}

/// A GraphQL API (`specs/issues.graphql`): `Issues::new(endpoint, client)`, a tool per root query
/// and mutation field, sent as GraphQL requests.
pub mod issues {
    include!(concat!(env!("OUT_DIR"), "/issues.rs"));
}
