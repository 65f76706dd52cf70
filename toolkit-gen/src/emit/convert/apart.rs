//! Object members of a union told apart by their properties, where no one property is a tag:
//! an untagged enum of structs, exact only when serde itself can tell every member from every
//! other. Two members are told apart when (checked pairwise, against the *declared* properties
//! of each, required names the schema does not describe included):
//!
//! - one requires a property the other does not declare, and the other's struct is closed
//!   (`deny_unknown_fields`): every value of the one carries the property, which the other
//!   refuses (GitHub's `delete-attestations-bulk`: `subject_digests` | `attestation_ids`);
//! - both are an answer's (lenient) structs, and each requires a property the other does not
//!   declare: a value as documented fits only its own member (a lenient struct ignores what it
//!   does not name anyway; an open input struct, which would keep the other's property in its
//!   `extra` map, is not told apart so);
//! - both require a property whose values cannot be the same: of different JSON kinds
//!   (`integer` against `string`), or strings of disjoint `enum`/`const` sets (GitHub's
//!   `projects/add-field`: `data_type` is `text | number | date`, `single_select` or
//!   `iteration`), neither accepting `null`: the property's value decides;
//! - both declare the same properties, and one of them differs in kind as above (arrays whose
//!   items differ in kind: GitHub's `issues/set-labels`, `labels` of strings or of objects):
//!   a value carrying the property is told apart by it; one leaving it out has the same
//!   properties for both, fits both structs and is written back as the same JSON whichever
//!   reads it.
//! - one requires a property the other does not declare, whose value cannot be `null`, and the
//!   other is an answer's (lenient) struct of named properties and no `additionalProperties`
//!   schema: tried first, the one refuses every value of the
//!   other as documented (which lacks the property), and takes its own before the other could
//!   (Stripe's expandable fields: `application | deleted_application`, the deleted one
//!   requiring `deleted: true`). The enum's variants are ordered so (a cycle of such orders is
//!   not told apart).
//!
//! Anything else (members that differ only in constraints serde does not check, open structs
//! that would take each other's properties into their `extra` map) stays a `serde_json::Value`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::kind::Kind;
use super::{Converter, is_null_schema};
use crate::emit::naming::{self, Scope};
use crate::emit::shared;

/// What serde checks of an object member: its declared and required properties, their schemas,
/// and whether its struct refuses others.
struct Shape {
    declared: BTreeSet<String>,
    required: BTreeSet<String>,
    properties: Map<String, Value>,
    closed: bool,
    /// An answer's struct: ignores what it does not name.
    lenient: bool,
    /// The schema takes properties it does not name (`additionalProperties` other than `false`).
    extras: bool,
}

impl Converter<'_> {
    /// How the object members `objects` of a union are told apart, when every member is told
    /// apart from every other by its properties (see the module's documentation); `None`
    /// otherwise. The string values that tell members apart are recorded in
    /// [`Shared::deciding`](crate::emit::shared::Shared::deciding): their enums get no
    /// catch-all variant.
    pub(super) fn told_apart(&mut self, objects: &[(usize, &Value)]) -> Option<Apart> {
        let mut shapes = Vec::new();
        for (_, member) in objects {
            let mut view = Map::new();
            if !self.object_view(member, 0, &mut view) {
                return None;
            }
            let properties = view
                .get("properties")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let required: BTreeSet<String> = view
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let mut declared: BTreeSet<String> = properties.keys().cloned().collect();
            declared.extend(required.iter().cloned());
            // Only a struct refuses what it does not name: an object with no properties is a
            // map (`additionalProperties: {…}`) or any object, whatever the strictness; and a
            // lenient struct (an answer's) refuses nothing.
            let is_struct = !properties.is_empty()
                || view.get("additionalProperties") == Some(&Value::Bool(false));
            let lenient = self.lenient_at(member);
            shapes.push(Shape {
                declared,
                required,
                properties,
                closed: is_struct && !lenient && self.closes(&view),
                lenient,
                extras: view
                    .get("additionalProperties")
                    .is_some_and(|extras| extras != &Value::Bool(false)),
            });
        }
        let mut deciding = Vec::new();
        let mut before = Vec::new();
        for (index, a) in shapes.iter().enumerate() {
            for (other, b) in shapes.iter().enumerate().skip(index + 1) {
                match self.decides(a, b, &mut deciding) {
                    Decided::Not => return None,
                    Decided::Either => {}
                    Decided::FirstBefore => before.push((index, other)),
                    Decided::SecondBefore => before.push((other, index)),
                }
            }
        }
        let order = tried_order(shapes.len(), &before)?;
        self.shared.deciding.extend(deciding);
        let mut scope = Scope::default();
        let mut names: Vec<(usize, String)> = objects
            .iter()
            .zip(&shapes)
            .enumerate()
            .map(|(index, ((_, member), shape))| {
                let base = self
                    .variant_base(member, shape, &shapes)
                    .unwrap_or_else(|| format!("Object{index}"));
                (order[index], scope.unique(&base, ""))
            })
            .collect();
        names.sort_by_key(|(rank, _)| *rank);
        Some(Apart {
            names: names.into_iter().map(|(_, name)| name).collect(),
            ranks: order,
        })
    }

    /// Whether serde tells the members `a` and `b` apart. When it does, the value sets of every
    /// string property both declare with values apart (`data_type: text | number | date`
    /// against `single_select`) are added to `deciding`, whichever rule decided: with a
    /// catch-all on such an enum, a value of one member that misses what the rule looks at
    /// (`options`) would read as the other.
    fn decides(&self, a: &Shape, b: &Shape, deciding: &mut Vec<BTreeSet<String>>) -> Decided {
        let differ = |name: &String| match (a.properties.get(name), b.properties.get(name)) {
            (Some(x), Some(y)) => self.apart_by(x, y),
            _ => None,
        };
        let requires_foreign =
            |x: &Shape, y: &Shape| x.required.iter().any(|name| !y.declared.contains(name));
        let (a_foreign, b_foreign) = (requires_foreign(a, b), requires_foreign(b, a));
        let lenient = a.lenient && b.lenient;
        let decided = (a_foreign && b.closed)
            || (b_foreign && a.closed)
            || (a_foreign && b_foreign && lenient)
            || a.required
                .iter()
                .filter(|name| b.required.contains(*name))
                .any(|name| differ(name).is_some())
            || (a.declared == b.declared && a.declared.iter().any(|name| differ(name).is_some()));
        // A property only `x` requires, which no value of `y` as documented carries: `x`,
        // tried first, refuses those values when a missing property is an error for it.
        let requires_own = |x: &Shape, y: &Shape| {
            y.lenient
                && !y.properties.is_empty()
                && !y.extras
                && x.required.iter().any(|name| {
                    !y.declared.contains(name)
                        && x.properties
                            .get(name)
                            .is_some_and(|property| !self.accepts_null(property))
                })
        };
        let outcome = if decided {
            Decided::Either
        } else if requires_own(a, b) {
            Decided::FirstBefore
        } else if requires_own(b, a) {
            Decided::SecondBefore
        } else {
            return Decided::Not;
        };
        for name in a.declared.intersection(&b.declared) {
            deciding.extend(differ(name).into_iter().flatten());
        }
        outcome
    }

    /// Whether no JSON value fits both property schemas as serde reads them.
    fn disjoint(&self, a: &Value, b: &Value) -> bool {
        self.apart_by(a, b).is_some()
    }

    /// When no JSON value fits both property schemas as serde reads them: the string value
    /// sets that make it so (two enums or constants), or none (two kinds).
    fn apart_by(&self, a: &Value, b: &Value) -> Option<Vec<BTreeSet<String>>> {
        if self.accepts_null(a) || self.accepts_null(b) {
            return None;
        }
        if let (Some(x), Some(y)) = (self.string_values(a), self.string_values(b)) {
            return x.is_disjoint(&y).then(|| vec![x, y]);
        }
        let differ = match (self.kind(a, 0), self.kind(b, 0)) {
            (Some(Kind::Array), Some(Kind::Array)) => {
                match (self.item_kind(a), self.item_kind(b)) {
                    (Some(x), Some(y)) => kinds_differ(x, y),
                    _ => false,
                }
            }
            (Some(x), Some(y)) => kinds_differ(x, y),
            _ => false,
        };
        differ.then(Vec::new)
    }

    /// The kind of an array schema's items.
    fn item_kind(&self, array: &Value) -> Option<Kind> {
        self.kind(self.follow(array).get("items")?, 0)
    }

    /// Whether a schema lets `null` through (`type: [X, "null"]`, a `null` in its `enum`, a
    /// `null` member).
    fn accepts_null(&self, schema: &Value) -> bool {
        let shape = self.follow(schema);
        let Some(map) = shape.as_object() else {
            return true;
        };
        if is_null_schema(shape) {
            return true;
        }
        let in_types = match map.get("type") {
            Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
            _ => false,
        };
        let in_enum = map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().any(Value::is_null));
        let in_members = ["anyOf", "oneOf"].iter().any(|key| {
            map.get(*key)
                .and_then(Value::as_array)
                .is_some_and(|members| members.iter().any(|m| self.accepts_null(m)))
        });
        in_types || in_enum || in_members
    }

    /// The strings a schema allows, when it is a string `enum` or `const`.
    fn string_values(&self, schema: &Value) -> Option<BTreeSet<String>> {
        let shape = self.follow(schema);
        let values: Vec<&Value> = match (shape.get("const"), shape.get("enum")) {
            (Some(constant), _) => vec![constant],
            (None, Some(Value::Array(values))) => values.iter().collect(),
            _ => return None,
        };
        values
            .into_iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// A variant name for `member`: its schema's name, the property only it requires, or the
    /// values or kind of the property that tells it from the others.
    fn variant_base(&self, member: &Value, shape: &Shape, shapes: &[Shape]) -> Option<String> {
        if let Some(name) = member
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(shared::named)
        {
            return Some(naming::type_name(&name));
        }
        let others = || shapes.iter().filter(|other| !std::ptr::eq(*other, shape));
        if let Some(own) = shape
            .required
            .iter()
            .find(|name| others().all(|other| !other.declared.contains(*name)))
        {
            return Some(naming::type_name(own));
        }
        for (name, property) in &shape.properties {
            let told = others().all(|other| {
                other
                    .properties
                    .get(name)
                    .is_some_and(|theirs| self.disjoint(property, theirs))
            });
            if !told {
                continue;
            }
            let shape_of = self.follow(property);
            let first = match (shape_of.get("const"), shape_of.get("enum")) {
                (Some(Value::String(value)), _) => Some(value.as_str()),
                (None, Some(Value::Array(values))) => values.first().and_then(Value::as_str),
                _ => None,
            };
            if let Some(first) = first {
                return Some(naming::type_name(first));
            }
            let kind = match (self.kind(property, 0), self.item_kind(property)) {
                (Some(Kind::Array), Some(items)) => format!("Of{}", items.variant_name()),
                (Some(kind), _) => kind.variant_name().to_owned(),
                (None, _) => continue,
            };
            return Some(format!("{}{kind}", naming::type_name(name)));
        }
        None
    }
}

/// Object members of a union told apart: their variant names, in the order the enum tries
/// them, and each member's place in that order (by its place among the union's objects).
pub(super) struct Apart {
    pub(super) names: Vec<String>,
    pub(super) ranks: Vec<usize>,
}

/// How two members are told apart: whichever serde tries first, or only with one of them first.
enum Decided {
    Not,
    Either,
    FirstBefore,
    SecondBefore,
}

/// The order in which `count` members are tried, each `(x, y)` of `before` putting `x` first,
/// and the members' own order otherwise; each member's rank, or `None` for a cycle. (A
/// topological sort of a handful of members, which no crate of the workspace has.)
fn tried_order(count: usize, before: &[(usize, usize)]) -> Option<Vec<usize>> {
    let mut ranks = vec![usize::MAX; count];
    for rank in 0..count {
        let next = (0..count).find(|&member| {
            ranks[member] == usize::MAX
                && before
                    .iter()
                    .all(|&(first, then)| then != member || ranks[first] != usize::MAX)
        })?;
        ranks[next] = rank;
    }
    Some(ranks)
}

/// Whether two JSON kinds share no value as serde reads them (an integer is a number too).
fn kinds_differ(a: Kind, b: Kind) -> bool {
    let number = |k: Kind| matches!(k, Kind::Integer | Kind::Number);
    a != b && !(number(a) && number(b))
}
