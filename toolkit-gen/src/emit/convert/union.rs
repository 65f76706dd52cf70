//! `oneOf` / `anyOf`: when the members of a union can be told apart, and the enum they become.
//!
//! - members that are `null` (or accept nothing) make the type an `Option`;
//! - members that are all strings of an `enum`/`const`: one string enum;
//! - members of one primitive kind (`string(ipv4) | string(ipv6)`, `string | enum`): that type;
//! - a member next to bare nullable objects or empty schemas (`anyOf: [{$ref: X}, {type:
//!   object, nullable: true}]`, Microsoft Graph's spelling of a nullable reference, or the
//!   same with `{}`): an optional `X`, the reading Microsoft's own generators give it, when
//!   every object is a partial `X` (it requires nothing); else an optional enum of `X` and
//!   `Other` (any object, or any value beside `{}`), which keeps what the document allows;
//! - objects whose one property holds a different constant in each: an internally tagged enum;
//! - objects told apart by their properties ([`apart`](super::apart)): an untagged enum of
//!   their structs;
//! - an answer's objects that nothing tells apart and that require nothing
//!   ([`merged`](super::merged)): one struct of all their properties;
//! - members of different JSON kinds (several objects told apart by a tag or by their
//!   properties, several arrays by their items' kinds, several primitives of one kind as that
//!   primitive): an untagged enum, tried in the order integer, number, string, array, object —
//!   exact, since serde's reading of one kind refuses every other;
//! - anything else: `serde_json::Value`, reported.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::kind::Kind;
use super::{ANNOTATIONS, Converter, Hint, doc_of, is_never_schema, is_null_schema};
use crate::emit::naming::{self, Scope};
use crate::emit::schema::{ItemKind, TaggedVariant, Ty, Variant};

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
        // One member next to bare nullable objects or empty schemas: that member, optional.
        let shaped: Vec<(usize, &Value)> = kept
            .iter()
            .copied()
            .filter(|(_, member)| !is_loose(member))
            .collect();
        if kept.len() > 1
            && let [(index, member)] = shaped.as_slice()
            && (member.get("$ref").is_some() || self.kind(member, 0) == Some(Kind::Object))
        {
            // The loose members allow an object that is not a full member (one without a
            // property the member requires): kept beside it, unless every object the loose
            // members allow is one (the member requires nothing, Microsoft Graph's case).
            let open = if kept
                .iter()
                .any(|(_, loose)| is_loose(loose) && loose_kind(loose) == Ty::Value)
            {
                Ty::Value
            } else {
                Ty::Object
            };
            if self.requires_some(member) {
                let ty = self.member_or_open(*index, member, open, pointer, hint);
                return ty.optional();
            }
            nullable = true;
            kept = shaped;
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
            if kinds.first() == Some(&Kind::Object) {
                if let Some(tagging) = self.find_tag(&kept) {
                    return wrap(self.tagged(&kept, tagging, pointer, &mut hint));
                }
                if let Some(apart) = self.told_apart(&kept) {
                    let ty = self.untagged(
                        &kept,
                        &kinds,
                        &vec![None; kinds.len()],
                        Objects::Apart(apart),
                        pointer,
                        hint,
                    );
                    return wrap(ty);
                }
                if let Some(ty) = self.merged(&kept, pointer, hint.clone()) {
                    return wrap(ty);
                }
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
        if !arrays_distinct {
            return wrap(self.untyped(pointer, "a union whose members can't be told apart"));
        }
        // Several objects: told apart by a tag, else by their properties.
        let objects = if objects.len() > 1 {
            if let Some(tagging) = self.find_tag(&objects) {
                Objects::Tagged(tagging)
            } else if let Some(apart) = self.told_apart(&objects) {
                Objects::Apart(apart)
            } else {
                return wrap(self.untyped(pointer, "a union whose members can't be told apart"));
            }
        } else {
            Objects::One
        };
        let item_kinds = if arrays > 1 {
            item_kinds
        } else {
            vec![None; kinds.len()]
        };
        let ty = self.untagged(&kept, &kinds, &item_kinds, objects, pointer, hint);
        wrap(ty)
    }

    /// Whether `member`'s objects must have some property (merged through `allOf`).
    fn requires_some(&self, member: &Value) -> bool {
        let mut view = Map::new();
        self.object_view(member, 0, &mut view)
            && view
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|required| !required.is_empty())
    }

    /// An untagged enum of `member` (at `index` of the union) and what loose members beside it
    /// allow that it does not: any object (`{type: [object, null]}`), or any value (`{}`).
    fn member_or_open(
        &mut self,
        index: usize,
        member: &Value,
        open: Ty,
        pointer: &str,
        mut hint: Hint,
    ) -> Ty {
        let anonymous = hint.fixed.is_none();
        let name = self.item_name(&mut hint);
        let slot = self.reserve(&name);
        let ty = self.convert(
            member,
            &format!("{pointer}/{index}"),
            Hint::new(format!("{name}Member")),
            false,
        );
        let mut scope = Scope::default();
        let first = match &ty {
            Ty::Named(named) => named.clone(),
            Ty::Box(inner) => match inner.as_ref() {
                Ty::Named(named) => named.clone(),
                _ => "Member".to_owned(),
            },
            _ => "Member".to_owned(),
        };
        let variants = vec![
            Variant {
                name: scope.unique(&first, ""),
                ty,
                doc: doc_of(member),
            },
            Variant {
                name: scope.unique("Other", ""),
                doc: Some(if open == Ty::Object {
                    "An object that is not one of the above: the schema allows any.".to_owned()
                } else {
                    "A value that is not one of the above: the schema allows any.".to_owned()
                }),
                ty: open,
            },
        ];
        self.settle(slot, name, anonymous, None, ItemKind::Untagged(variants))
    }

    /// The JSON kind a member's values have, when it has one.
    pub(super) fn kind(&self, member: &Value, depth: usize) -> Option<Kind> {
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

    /// An untagged enum of members of different kinds (several primitives of one kind are one
    /// variant of that primitive: `string(date) | string(date-time)` is a `String`), whose
    /// object members are one variant, a tagged enum, or one variant each (`objects`).
    fn untagged(
        &mut self,
        kept: &[(usize, &Value)],
        kinds: &[Kind],
        item_kinds: &[Option<Kind>],
        objects: Objects,
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
        // Objects told apart by their properties are tried in the order that tells them apart:
        // each object member's rank, by its index among the union's members.
        let ranks: Vec<usize> = match &objects {
            Objects::Apart(apart) => apart.ranks.clone(),
            _ => Vec::new(),
        };
        let rank_of: std::collections::HashMap<usize, usize> = order
            .iter()
            .filter(|(kind, _, _, _)| *kind == Kind::Object)
            .enumerate()
            .map(|(seen, (_, _, index, _))| (*index, ranks.get(seen).copied().unwrap_or(seen)))
            .collect();
        order.sort_by_key(|(kind, items, index, _)| (*kind, *items, rank_of.get(index).copied()));
        let object_members: Vec<(usize, &Value)> = order
            .iter()
            .filter(|(kind, _, _, _)| *kind == Kind::Object)
            .map(|(_, _, index, member)| (*index, *member))
            .collect();
        let shared_kinds: HashSet<Kind> = kinds
            .iter()
            .filter(|kind| {
                !matches!(kind, Kind::Object | Kind::Array)
                    && kinds.iter().filter(|k| k == kind).count() > 1
            })
            .copied()
            .collect();
        let (mut tagging, apart) = match objects {
            Objects::One => (None, None),
            Objects::Tagged(tagging) => (Some(tagging), None),
            Objects::Apart(apart) => (None, Some(apart.names)),
        };
        let mut variants = Vec::new();
        let mut done_kinds = HashSet::new();
        let mut object_index = 0;
        for (kind, items, index, member) in order {
            let mut variant = match items {
                Some(items) => format!("ArrayOf{}", items.variant_name()),
                None => kind.variant_name().to_owned(),
            };
            if shared_kinds.contains(&kind) {
                // Several members of one primitive kind (`string | string(date)`): that
                // primitive, once.
                if !done_kinds.insert(kind) {
                    continue;
                }
                variants.push(Variant {
                    name: variant,
                    ty: match kind {
                        Kind::Bool => Ty::Bool,
                        Kind::Integer => Ty::Int("i64"),
                        Kind::Number => Ty::F64,
                        _ => Ty::String,
                    },
                    doc: None,
                });
                continue;
            }
            if kind == Kind::Object
                && let Some(names) = &apart
            {
                variant = names.get(object_index).cloned().unwrap_or(variant);
                object_index += 1;
            }
            let variant_hint = Hint::new(format!("{name}{variant}"));
            let ty = match (kind, tagging.take_if(|_| kind == Kind::Object)) {
                (Kind::Object, Some(tagging)) => {
                    let mut variant_hint = variant_hint;
                    self.tagged(&object_members, tagging, pointer, &mut variant_hint)
                }
                (Kind::Object, None) if object_members.len() > 1 && apart.is_none() => continue,
                _ => self.convert(member, &format!("{pointer}/{index}"), variant_hint, false),
            };
            let tagged_objects =
                kind == Kind::Object && object_members.len() > 1 && apart.is_none();
            variants.push(Variant {
                name: variant,
                ty,
                doc: if tagged_objects { None } else { doc_of(member) },
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

/// What a union's object members become: one variant (a single object), one tagged enum, or one
/// variant each, named (told apart by their properties).
enum Objects {
    One,
    Tagged(Tagging),
    Apart(super::apart::Apart),
}

/// Whether a union member says nothing of the value's shape but "an object, or null" or
/// "anything" (`{type: object, nullable: true}`, `{}`): written next to a reference, the
/// document's way of saying that the reference may be `null`.
fn is_loose(member: &Value) -> bool {
    let Some(map) = member.as_object() else {
        return member == &Value::Bool(true);
    };
    let nullable_object = match map.get("type") {
        None => true,
        Some(Value::Array(types)) => {
            types.iter().any(|t| t == "null") && types.iter().all(|t| t == "object" || t == "null")
        }
        Some(Value::String(t)) => t == "object" && map.get("nullable") == Some(&Value::Bool(true)),
        Some(_) => false,
    };
    nullable_object
        && map
            .keys()
            .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
}

/// What a loose member allows beside `null`: any object (`{type: [object, null]}`), or any value
/// (`{}`).
fn loose_kind(member: &Value) -> Ty {
    if member.get("type").is_some() {
        Ty::Object
    } else {
        Ty::Value
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
