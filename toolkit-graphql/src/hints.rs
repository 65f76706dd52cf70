//! What a GraphQL operation's kind says of its tool.

use toolkit_core::Annotations;

/// The hints of a tool that is a query (`query`) or a mutation: a query reads and may be sent
/// again; a mutation changes state, so a default policy asks a person before it runs. Either
/// reaches a server outside the host.
pub(crate) fn hints(query: bool) -> Annotations {
    Annotations {
        read_only: Some(query),
        destructive: (!query).then_some(true),
        idempotent: Some(query),
        open_world: Some(true),
        ..Annotations::default()
    }
}
