//! Generates the typed tools of `specs/` into `OUT_DIR`: `petstore.rs` (an HTTP API) and
//! `tasks.rs` (an MCP server, from a snapshot of its `tools/list`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolkit_gen::Builder::new()
        .openapi("specs/petstore.yaml")
        .mcp_snapshot("specs/tasks.json")
        .generate_to_out_dir()?;
    Ok(())
}
