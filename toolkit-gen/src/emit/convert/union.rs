//! `oneOf` / `anyOf`: when the members of a union can be told apart, and the enum they become.
//!
//! - members that are `null` (or accept nothing) make the type an `Option`;
//! - members that are all strings of an `enum`/`const`: one string enum;
//! - members of one primitive kind (`string(ipv4) | string(ipv6)`, `string | enum`): that type;
//! - objects whose one property holds a different constant in each: an internally tagged enum;
//! - members of different JSON kinds (several objects told apart by a tag, several arrays by
//!   their items' kinds): an untagged enum, tried in the order integer, number, string, array,
//!   object;
//! - anything else: `serde_json::Value`, reported.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Converter, Hint, doc_of, is_never_schema, is_null_schema};
use crate::emit::naming::{self, Scope};
use crate::emit::schema::{ItemKind, TaggedVariant, Ty, Variant};

/// The JSON kinds a union's members are told apart by, in the order an untagged enum tries them
/// (an integer before a number, so that `1` stays an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Bool,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn of_type(name: &str) -> Option<Kind> {
        Some(match name {
            "boolean" => Kind::Bool,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    fn of_value(value: &Value) -> Option<Kind> {
        Some(match value {
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_i64() || n.is_u64() => Kind::Integer,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
            Value::Null => return None,
        })
    }

    fn variant_name(self) -> &'static str {
        match self {
            Kind::Bool => "Bool",
            Kind::Integer => "Integer",
            Kind::Number => "Number",
            Kind::String => "String",
            Kind::Array => "Array",
            Kind::Object => "Object",
        }
    }
}

impl Converter<'_> {
    pub(super) fn union(&mut self, members: &[Value], pointer: &str, mut hint: Hint) -> Ty {
        let mut nullable = false;
        let mut kept: Vec<(usize, &Value)> = Vec::new();
        for (index, member) in members.iter().enumerate() {
            let shape = self.follow(member);
            if is_null_schema(shape) {
                nullable = true;
            } else if !is_never_schema(shape) {
                kept.push((index, member));
            }
        }
        let wrap = |ty: Ty| if nullable { ty.optional() } else { ty };
        match kept.as_slice() {
            [] => {
                return if nullable {
                    Ty::Unit
                } else {
                    self.untyped(pointer, "a union with no member")
                };
            }
            [(index, member)] => {
                let ty = self.convert(member, &format!("{pointer}/{index}"), hint, false);
                return wrap(ty);
            }
            _ => {}
        }
        // Members that are all strings of an `enum` or `const`: one enum of them all.
        let mut strings = Vec::new();
        let all_strings = kept.iter().all(|(_, member)| {
            let shape = self.follow(member);
            let values: Vec<&Value> = match (shape.get("const"), shape.get("enum")) {
                (Some(c), _) => vec![c],
                (None, Some(Value::Array(values))) => values.iter().collect(),
                _ => return false,
            };
            values.iter().all(|v| match v.as_str() {
                Some(s) => {
                    strings.push(s.to_owned());
                    true
                }
                None => v.is_null(),
            })
        });
        if all_strings && !strings.is_empty() {
            let ty = self.string_enum(&strings, pointer, hint);
            return wrap(ty);
        }
        let kinds: Vec<Option<Kind>> = kept.iter().map(|(_, m)| self.kind(m, 0)).collect();
        let Some(kinds) = kinds.into_iter().collect::<Option<Vec<Kind>>>() else {
            return wrap(self.untyped(pointer, "a union with a member of no one JSON kind"));
        };
        let distinct: HashSet<Kind> = kinds.iter().copied().collect();
        if distinct.len() == 1
            || distinct
                .iter()
                .all(|k| matches!(k, Kind::Integer | Kind::Number))
        {
            // One primitive in different spellings (`ipv4 | ipv6`, `string | enum`).
            let primitive = if distinct.contains(&Kind::Number) {
                Some(Ty::F64)
            } else {
                match kinds.first() {
                    Some(Kind::String) => Some(Ty::String),
                    Some(Kind::Bool) => Some(Ty::Bool),
                    Some(Kind::Integer) => Some(Ty::Int("i64")),
                    _ => None,
                }
            };
            if let Some(primitive) = primitive {
                return wrap(primitive);
            }
            if kinds.first() == Some(&Kind::Object)
                && let Some(tagging) = self.find_tag(&kept)
            {
                return wrap(self.tagged(&kept, tagging, pointer, &mut hint));
            }
            return wrap(self.untyped(pointer, "a union whose members can't be told apart"));
        }
        // Different kinds, where all the objects (if more than one) are told apart by a tag: an
        // untagged enum, whose object variant is a tagged enum (`"auto" | {type: ...}`).
        let objects: Vec<(usize, &Value)> = kinds
            .iter()
            .zip(&kept)
            .filter(|(kind, _)| **kind == Kind::Object)
            .map(|(_, member)| *member)
            .collect();
        // Several arrays are told apart by their items' kinds (`array<string> | array<integer>`);
        // an empty array is any of them, and the same JSON whichever serde picks.
        let item_kinds: Vec<Option<Kind>> = kinds
            .iter()
            .zip(&kept)
            .map(|(kind, (_, member))| match kind {
                Kind::Array => self
                    .follow(member)
                    .get("items")
                    .and_then(|items| self.kind(items, 0)),
                _ => None,
            })
            .collect();
        let arrays = kinds.iter().filter(|k| **k == Kind::Array).count();
        let array_kinds: HashSet<Kind> = item_kinds.iter().flatten().copied().collect();
        let arrays_distinct = arrays <= 1 || array_kinds.len() == arrays;
        let others = kinds
            .iter()
            .filter(|k| !matches!(k, Kind::Object | Kind::Array))
            .count();
        let other_kinds = distinct
            .iter()
            .filter(|k| !matches!(k, Kind::Object | Kind::Array))
            .count();
        if others != other_kinds || !arrays_distinct {
            return wrap(self.untyped(pointer, "a union whose members can't be told apart"));
        }
        let tagging = if objects.len() > 1 {
            match self.find_tag(&objects) {
                Some(tagging) => Some(tagging),
                None => {
                    return wrap(
                        self.untyped(pointer, "a union whose members can't be told apart"),
                    );
                }
            }
        } else {
            None
        };
        let item_kinds = if arrays > 1 {
            item_kinds
        } else {
            vec![None; kinds.len()]
        };
        let ty = self.untagged(&kept, &kinds, &item_kinds, tagging, pointer, hint);
        wrap(ty)
    }

    /// The JSON kind a member's values have, when it has one.
    fn kind(&self, member: &Value, depth: usize) -> Option<Kind> {
        let shape = self.follow(member);
        let map = shape.as_object()?;
        if let Some(constant) = map.get("const") {
            return Kind::of_value(constant);
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            let kinds: HashSet<Option<Kind>> = values
                .iter()
                .filter(|v| !v.is_null())
                .map(Kind::of_value)
                .collect();
            return match kinds.into_iter().collect::<Vec<_>>().as_slice() {
                [kind] => *kind,
                _ => None,
            };
        }
        match map.get("type") {
            Some(Value::String(t)) => return Kind::of_type(t),
            Some(Value::Array(types)) => {
                let kinds: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                return match kinds.as_slice() {
                    [Value::String(t)] => Kind::of_type(t),
                    _ => None,
                };
            }
            Some(_) => return None,
            None => {}
        }
        if let Some(Value::Array(members)) = map.get("oneOf").or_else(|| map.get("anyOf")) {
            // A nested union has a kind when all its members share one.
            if depth > 8 {
                return None;
            }
            let kinds: HashSet<Option<Kind>> = members
                .iter()
                .filter(|m| !is_null_schema(self.follow(m)))
                .map(|m| self.kind(m, depth + 1))
                .collect();
            return match kinds.into_iter().collect::<Vec<_>>().as_slice() {
                [kind] => *kind,
                _ => None,
            };
        }
        if map.contains_key("properties")
            || map.contains_key("allOf")
            || map.contains_key("additionalProperties")
        {
            Some(Kind::Object)
        } else if map.contains_key("items") || map.contains_key("prefixItems") {
            Some(Kind::Array)
        } else {
            None
        }
    }

    fn untagged(
        &mut self,
        kept: &[(usize, &Value)],
        kinds: &[Kind],
        item_kinds: &[Option<Kind>],
        tagging: Option<Tagging>,
        pointer: &str,
        mut hint: Hint,
    ) -> Ty {
        let anonymous = hint.fixed.is_none();
        let name = self.item_name(&mut hint);
        let slot = self.reserve(&name);
        let mut order: Vec<(Kind, Option<Kind>, usize, &Value)> = kinds
            .iter()
            .zip(item_kinds)
            .zip(kept)
            .map(|((kind, items), (index, member))| (*kind, *items, *index, *member))
            .collect();
        order.sort_by_key(|(kind, items, _, _)| (*kind, *items));
        let mut variants = Vec::new();
        let mut tagging = tagging;
        let objects: Vec<(usize, &Value)> = order
            .iter()
            .filter(|(kind, _, _, _)| *kind == Kind::Object)
            .map(|(_, _, index, member)| (*index, *member))
            .collect();
        for (kind, items, index, member) in order {
            let variant = match items {
                Some(items) => format!("ArrayOf{}", items.variant_name()),
                None => kind.variant_name().to_owned(),
            };
            let mut variant_hint = Hint::new(format!("{name}{variant}"));
            let tagging = if kind == Kind::Object {
                tagging.take()
            } else {
                None
            };
            let ty = match (kind, tagging) {
                (Kind::Object, Some(tagging)) => {
                    self.tagged(&objects, tagging, pointer, &mut variant_hint)
                }
                (Kind::Object, None) if objects.len() > 1 => continue,
                _ => self.convert(member, &format!("{pointer}/{index}"), variant_hint, false),
            };
            variants.push(Variant {
                name: variant,
                ty,
                doc: if kind == Kind::Object && objects.len() > 1 {
                    None
                } else {
                    doc_of(member)
                },
            });
        }
        self.settle(slot, name, anonymous, None, ItemKind::Untagged(variants))
    }

    /// The property that tells object members apart, when one property of every member holds a
    /// constant string that differs from member to member.
    fn find_tag(&self, kept: &[(usize, &Value)]) -> Option<Tagging> {
        let mut views = Vec::new();
        for (_, member) in kept {
            let mut view = Map::new();
            if !self.object_view(member, 0, &mut view) {
                return None;
            }
            views.push(view);
        }
        let tag_value = |view: &Map<String, Value>, tag: &str| -> Option<String> {
            let property = self.follow(view.get("properties")?.get(tag)?);
            match (property.get("const"), property.get("enum")) {
                (Some(Value::String(value)), _) => Some(value.clone()),
                (None, Some(Value::Array(values))) => match values.as_slice() {
                    [Value::String(value)] => Some(value.clone()),
                    _ => None,
                },
                _ => None,
            }
        };
        let first = views.first()?.get("properties")?.as_object()?;
        let tag = first
            .keys()
            .find(|candidate| {
                let mut seen = HashSet::new();
                views
                    .iter()
                    .all(|view| tag_value(view, candidate).is_some_and(|value| seen.insert(value)))
            })?
            .clone();
        let values = views
            .iter()
            .filter_map(|view| tag_value(view, &tag))
            .collect();
        Some(Tagging { tag, views, values })
    }

    /// An internally tagged enum of object members, as [`find_tag`](Self::find_tag) found them.
    fn tagged(
        &mut self,
        kept: &[(usize, &Value)],
        tagging: Tagging,
        pointer: &str,
        hint: &mut Hint,
    ) -> Ty {
        let Tagging { tag, views, values } = tagging;
        let anonymous = hint.fixed.is_none();
        let name = self.item_name(hint);
        let slot = self.reserve(&name);
        let mut scope = Scope::default();
        let mut variants = Vec::new();
        for (((index, member), view), value) in kept.iter().zip(views).zip(values) {
            let variant = scope.unique(&naming::type_name(&value), "");
            let ty = self.structure(
                &view,
                &format!("{pointer}/{index}"),
                Hint::new(format!("{name}{variant}")),
                Some(&tag),
            );
            variants.push(TaggedVariant {
                name: variant,
                value,
                ty,
                doc: doc_of(member),
            });
        }
        self.settle(
            slot,
            name,
            anonymous,
            None,
            ItemKind::Tagged { tag, variants },
        )
    }
}

/// How a union's object members are told apart: the tag property, each member's object (merged
/// through references and `allOf`) and its tag value.
#[derive(Debug)]
struct Tagging {
    tag: String,
    views: Vec<Map<String, Value>>,
    values: Vec<String>,
}
