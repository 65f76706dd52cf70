//! Generates the typed tools of `specs/` into `OUT_DIR`: `petstore.rs` (an HTTP API) and
//! `tasks.rs` (an MCP server, from a snapshot of its `tools/list`) and `issues.rs` (a GraphQL API,
//! from its schema).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolkit_gen::Builder::new()
        .openapi("specs/petstore.yaml")
        .mcp_snapshot("specs/tasks.json")
        .graphql("specs/issues.graphql")
        .generate_to_out_dir()?;
    Ok(())
}
