//! JSON pointers (`#/inputSchema/properties/a~1b`) into a tool object.

/// `pointer` with the segment `segment` appended, escaped (`~` as `~0`, `/` as `~1`).
pub(super) fn join(pointer: &str, segment: &str) -> String {
    let mut joined = String::with_capacity(pointer.len() + segment.len() + 1);
    joined.push_str(pointer);
    joined.push('/');
    for character in segment.chars() {
        match character {
            '~' => joined.push_str("~0"),
            '/' => joined.push_str("~1"),
            other => joined.push(other),
        }
    }
    joined
}

/// A pointer of the runtime's, into an input schema (`#/properties/a`), as one into the tool
/// (`#/inputSchema/properties/a`).
pub(super) fn in_input(pointer: &str) -> String {
    match pointer.strip_prefix('#') {
        Some(rest) => format!("#/inputSchema{rest}"),
        None => format!("#/inputSchema/{pointer}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_escaped() {
        assert_eq!(join("#/properties", "a/b~c"), "#/properties/a~1b~0c");
        assert_eq!(in_input("#/properties/a"), "#/inputSchema/properties/a");
        assert_eq!(in_input("#"), "#/inputSchema");
    }
}
