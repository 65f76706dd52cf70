//! [`GraphqlSchema`]: a schema read from SDL or from an introspection result, and validated.

use std::fmt;
use std::sync::Arc;

use apollo_compiler::Schema;
use apollo_compiler::validation::Valid;

use crate::introspection;
use crate::problem::{Problem, SchemaError};

/// The largest schema text read, SDL or introspection JSON: 32 MiB (GitHub's introspection
/// result is 5 MB).
pub const MAX_SCHEMA_LENGTH: usize = 32 << 20;

/// A validated GraphQL schema, cheap to clone.
#[derive(Clone)]
pub struct GraphqlSchema {
    schema: Arc<Valid<Schema>>,
}

impl fmt::Debug for GraphqlSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphqlSchema")
            .field("types", &self.schema.types.len())
            .finish_non_exhaustive()
    }
}

impl GraphqlSchema {
    /// Reads `text`, named `file` in problems: an introspection result when it starts with `{`
    /// (`{"data": {"__schema": …}}` or `{"__schema": …}`), SDL otherwise.
    ///
    /// # Errors
    ///
    /// [`SchemaError`] with every problem, located: a text over [`MAX_SCHEMA_LENGTH`], JSON that
    /// is no introspection result, a schema that does not parse or validate.
    ///
    /// # Examples
    ///
    /// ```
    /// use toolkit_graphql::GraphqlSchema;
    ///
    /// let schema = GraphqlSchema::read("type Query { hello(name: String!): String }", "hello.graphql")?;
    /// let bad = GraphqlSchema::read("type Query { hello: Nope }", "bad.graphql").unwrap_err();
    /// assert_eq!((bad.problems[0].line, bad.problems[0].column), (1, 21));
    /// # Ok::<(), toolkit_graphql::SchemaError>(())
    /// ```
    pub fn read(text: &str, file: &str) -> Result<Self, SchemaError> {
        if text.len() > MAX_SCHEMA_LENGTH {
            return Err(SchemaError {
                problems: vec![Problem::whole(
                    file,
                    format!(
                        "the schema is {} bytes, more than the {MAX_SCHEMA_LENGTH} read",
                        text.len()
                    ),
                )],
            });
        }
        if text.trim_start().starts_with('{') {
            Self::from_introspection(text, file)
        } else {
            Self::from_sdl(text, file)
        }
    }

    /// Reads SDL `text`, named `file` in problems.
    ///
    /// # Errors
    ///
    /// [`SchemaError`] with every problem apollo-compiler found, at its line and column.
    pub fn from_sdl(text: &str, file: &str) -> Result<Self, SchemaError> {
        match Schema::parse_and_validate(text, file) {
            Ok(schema) => Ok(Self {
                schema: Arc::new(schema),
            }),
            Err(invalid) => Err(SchemaError {
                problems: Problem::from_diagnostics(file, &invalid.errors),
            }),
        }
    }

    /// Reads an introspection result, JSON `text` named `file` in problems.
    ///
    /// # Errors
    ///
    /// [`SchemaError`]: JSON that does not parse (at its line and column), that is no
    /// introspection result, or whose schema does not validate (located in the SDL it is
    /// written as, named `file (as SDL)`).
    pub fn from_introspection(text: &str, file: &str) -> Result<Self, SchemaError> {
        let json: serde_json::Value = serde_json::from_str(text).map_err(|error| SchemaError {
            problems: vec![Problem::at(
                file,
                error.line(),
                error.column(),
                error.to_string(),
            )],
        })?;
        Self::from_introspection_json(&json, file)
    }

    /// Reads an introspection result already parsed, `json`, named `file` in problems: what an
    /// endpoint answered to the introspection query, for one.
    ///
    /// # Errors
    ///
    /// [`SchemaError`]: JSON that is no introspection result, or whose schema does not validate
    /// (located in the SDL it is written as, named `file (as SDL)`).
    pub fn from_introspection_json(
        json: &serde_json::Value,
        file: &str,
    ) -> Result<Self, SchemaError> {
        let sdl = introspection::to_sdl(json).map_err(|message| SchemaError {
            problems: vec![Problem::whole(file, message)],
        })?;
        Self::from_sdl(&sdl, &format!("{file} (as SDL)"))
    }

    /// The validated schema, for apollo-compiler.
    pub fn schema(&self) -> &Arc<Valid<Schema>> {
        &self.schema
    }
}
