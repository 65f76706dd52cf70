//! Reads a GraphQL schema (SDL or introspection JSON) into tools and prints how many, how long it
//! took, and what was skipped: `cargo run --release -p toolkit-graphql --example read_schema -- schema.json`.

use std::time::Instant;

use toolkit_graphql::{GraphqlSchema, ReadOptions, read_schema_tools};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("give the schema's path")?;
    let started = Instant::now();
    let text = std::fs::read_to_string(&path)?;
    let schema = GraphqlSchema::read(&text, &path)?;
    let validated = started.elapsed();
    let read = read_schema_tools(&schema, &ReadOptions::default());
    let catalog = serde_json::to_string(&read.operations)?;
    println!(
        "{} tools, {} skipped, catalog {} bytes; read and validated in {validated:?}, tools in {:?}",
        read.operations.len(),
        read.skipped.len(),
        catalog.len(),
        started.elapsed() - validated
    );
    Ok(())
}
