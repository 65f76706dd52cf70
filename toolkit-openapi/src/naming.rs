//! Names the reader gives: a tool's name for an operation, and a property's for a parameter.
//!
//! - A tool is named by its `operationId`. One without gets a name from its method and path:
//!   `GET /pets/{petId}/photos` → `get_pets_petId_photos`. Two operations whose names a model
//!   would read as one (the runtime's charset rule, [`toolkit_core::naming`]) cannot both be tools.
//! - A property is named as its parameter, in the characters agents accept (`A-Z a-z 0-9 _ -`,
//!   the charset of [`toolkit_core::naming`]; every other character becomes `_`), cut to 64. The place
//!   goes before the name (`query_id`, `path_id`) when two parameters would share one or one is
//!   `body`, which names the body's property. Should two still share one, the later ones end
//!   with `_2`, `_3`, … in the document's order.

use std::collections::{HashMap, HashSet};

use crate::operations::Location;

/// The longest property name agents accept (Anthropic's limit).
const MAX_PROPERTY_LENGTH: usize = 64;

/// The name of the property that holds a request body.
pub(crate) const BODY: &str = "body";

/// The name of an operation without an `operationId`: the method, then each segment of the path
/// (a `{name}` as its name), joined by `_`, in the agents' charset.
pub(crate) fn operation_name(method: &str, path: &str) -> String {
    let mut name = method.to_ascii_lowercase();
    for segment in path.split('/').filter(|segment| !segment.is_empty()) {
        name.push('_');
        name.extend(
            segment
                .chars()
                .filter(|c| !matches!(c, '{' | '}'))
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                }),
        );
    }
    name
}

/// The name a model reads for the tool `name`, under the runtime's rules (without the cut).
pub(crate) fn as_model_reads(name: &str) -> String {
    toolkit_core::naming::tool_name("s", name, usize::MAX)
}

/// `name` in the agents' charset, cut to 64 characters.
pub(crate) fn in_charset(name: &str) -> String {
    let mut property: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_PROPERTY_LENGTH)
        .collect();
    if property.is_empty() {
        property.push('_');
    }
    property
}

/// The property name of each parameter, given as (place, name), in order; `has_body` says
/// whether the body takes the name `body`.
pub(crate) fn property_names(parameters: &[(Location, &str)]) -> Vec<String> {
    let plain: Vec<String> = parameters
        .iter()
        .map(|(_, name)| in_charset(name))
        .collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for name in &plain {
        *counts.entry(name).or_default() += 1;
    }
    let placed: Vec<String> = parameters
        .iter()
        .zip(&plain)
        .map(|((location, name), property)| {
            if counts.get(property.as_str()).copied().unwrap_or(0) > 1 || property == BODY {
                in_charset(&format!("{}_{name}", location.as_str()))
            } else {
                property.clone()
            }
        })
        .collect();
    let mut taken: HashSet<String> = HashSet::from([BODY.to_owned()]);
    placed
        .into_iter()
        .map(|wanted| {
            let mut name = wanted.clone();
            let mut count = 1;
            while !taken.insert(name.clone()) {
                count += 1;
                name = format!("{wanted}_{count}");
            }
            name
        })
        .collect()
}

/// The extension that names the body's property (as converters from 2.0 write it, and the
/// reader honours in any document).
pub(crate) const BODY_NAME: &str = "x-codegen-request-body-name";

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn operations_without_an_id_are_named_from_method_and_path() {
        assert_eq!(
            operation_name("GET", "/pets/{petId}/photos"),
            "get_pets_petId_photos"
        );
        assert_eq!(operation_name("post", "/"), "post");
        assert_eq!(
            operation_name("DELETE", "/v1/a.b/{x-y}"),
            "delete_v1_a_b_x-y"
        );
    }

    #[test]
    fn the_place_goes_first_when_names_would_meet_or_one_is_body() {
        let names = property_names(&[
            (Location::Path, "id"),
            (Location::Query, "id"),
            (Location::Query, "body"),
            (Location::Header, "X-Trace.Id"),
        ]);
        assert_eq!(names, ["path_id", "query_id", "query_body", "X-Trace_Id"]);
    }

    #[test]
    fn names_that_still_meet_get_a_number() {
        // Twilio's `StartTime<` and `StartTime>` are both `StartTime_` in the charset.
        let names = property_names(&[
            (Location::Query, "StartTime"),
            (Location::Query, "StartTime<"),
            (Location::Query, "StartTime>"),
        ]);
        assert_eq!(
            names,
            ["StartTime", "query_StartTime_", "query_StartTime__2"]
        );
    }
}
