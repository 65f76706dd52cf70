//! The default selection set of a field's type: what a tool answers when the model does not say.
//!
//! Its scalar and enum fields, and those of the object fields under it, to a depth (2 unless the
//! reader is told otherwise: `repository` answers its own scalars and those of `owner`,
//! `licenseInfo`, …). Left out: fields that need an argument with no default
//! (`repository.issue(number:)`), paginated fields (a Relay connection's, which take `first` or
//! `last`: GitHub refuses one asked for without a page size, which the model gives through a
//! `selection`), and deprecated fields. A union or
//! an interface answers `__typename`; an object with nothing left to select answers
//! `__typename` alone.

use apollo_compiler::Schema;
use apollo_compiler::schema::{ExtendedType, FieldDefinition};

/// Whether the named type is a leaf (a scalar or an enum): no selection set.
pub(crate) fn is_leaf(schema: &Schema, name: &str) -> bool {
    matches!(
        schema.types.get(name),
        Some(ExtendedType::Scalar(_) | ExtendedType::Enum(_))
    )
}

/// The default selection set (without its braces) of the composite type `name`, `depth` levels
/// deep (at least 1).
pub(crate) fn default_selection(schema: &Schema, name: &str, depth: usize) -> String {
    let mut selection = Vec::new();
    let fields = match schema.types.get(name) {
        Some(ExtendedType::Object(object)) => Some(&object.fields),
        Some(ExtendedType::Interface(interface)) => {
            selection.push("__typename".to_owned());
            Some(&interface.fields)
        }
        Some(ExtendedType::Union(_)) => {
            selection.push("__typename".to_owned());
            None
        }
        _ => None,
    };
    for field in fields.into_iter().flat_map(|fields| fields.values()) {
        if !selectable(field) {
            continue;
        }
        let type_name = field.ty.inner_named_type().as_str();
        if is_leaf(schema, type_name) {
            selection.push(field.name.as_str().to_owned());
        } else if depth > 1 {
            let inner = default_selection(schema, type_name, depth - 1);
            // A nested object that answers nothing but its `__typename` adds nothing.
            if inner != "__typename" {
                selection.push(format!("{} {{ {inner} }}", field.name));
            }
        }
    }
    if selection.is_empty() {
        "__typename".to_owned()
    } else {
        selection.join(" ")
    }
}

/// Whether a default selection takes `field`: no required argument, no page size, not
/// deprecated.
fn selectable(field: &FieldDefinition) -> bool {
    field.directives.get("deprecated").is_none()
        && field.arguments.iter().all(|argument| {
            (!argument.ty.is_non_null() || argument.default_value.is_some())
                && !matches!(argument.name.as_str(), "first" | "last")
        })
}
