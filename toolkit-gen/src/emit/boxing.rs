//! Large types kept off the stack: after every tool is converted, a named type whose value would
//! take more than [`LIMIT`] bytes is boxed where another type holds it inline (a field, an enum's
//! variant, a newtype), so that no generated type is larger than its own fields.
//!
//! Without it, sizes multiply with nesting: Stripe's answers hold objects that hold objects
//! inline, and its `CreditNote` was 960 KB. A debug build reads such a value with several copies
//! of it on the stack (serde's visitor keeps each field, the value it builds and the one it
//! returns), which overflows a Tokio worker's 2 MB stack and even a main thread's 8 MB. Boxed, a
//! type costs its own fields, and reading it costs a frame of about that size per level of
//! nesting of the JSON (which `serde_json` bounds at 128 levels when it parses).
//!
//! The sizes are estimates of what rustc lays out (an `Option` counted as its value and a tag,
//! a `serde_json::Value` as the 72 bytes it takes with `preserve_order`); a type alias is never
//! boxed (it names the same type as its target, whose values pass between them).

use std::collections::{HashMap, HashSet};

use super::schema::{Item, ItemKind, Ty};

/// The largest estimated size, in bytes, of a named type held inline; larger ones are boxed.
pub(crate) const LIMIT: usize = 256;

/// Boxes, in every item of `items`, each inline use of a named type larger than [`LIMIT`].
pub(crate) fn box_large_types(items: &mut [Vec<Item>]) {
    let sizes = {
        let by_name: HashMap<&str, &ItemKind> = items
            .iter()
            .flatten()
            .map(|item| (item.name.as_str(), &item.kind))
            .collect();
        let mut sizes = Sizes {
            by_name: &by_name,
            done: HashMap::new(),
            visiting: HashSet::new(),
        };
        for name in by_name.keys() {
            sizes.item(name);
        }
        sizes.done
    };
    let large: HashSet<&str> = sizes
        .iter()
        .filter(|(_, size)| **size > LIMIT)
        .map(|(name, _)| name.as_str())
        .collect();
    if large.is_empty() {
        return;
    }
    for item in items.iter_mut().flatten() {
        match &mut item.kind {
            ItemKind::Struct(structure) => {
                for field in &mut structure.fields {
                    boxed(&mut field.ty, &large);
                }
            }
            ItemKind::Untagged(variants) => {
                for variant in variants {
                    boxed(&mut variant.ty, &large);
                }
            }
            ItemKind::Tagged { variants, .. } => {
                for variant in variants {
                    boxed(&mut variant.ty, &large);
                }
            }
            ItemKind::Newtype(ty) => boxed(ty, &large),
            ItemKind::Tuple(tys) => {
                for ty in tys {
                    boxed(ty, &large);
                }
            }
            ItemKind::StringEnum { .. } | ItemKind::Alias(_) => {}
        }
    }
}

/// Boxes the inline uses of `large` types in `ty` (those behind a `Vec`, a map or a `Box` are
/// on the heap already).
fn boxed(ty: &mut Ty, large: &HashSet<&str>) {
    match ty {
        Ty::Named(name) if large.contains(name.as_str()) => {
            let named = std::mem::replace(ty, Ty::Unit);
            *ty = Ty::Box(Box::new(named));
        }
        Ty::Option(inner) | Ty::Nullable(inner) => boxed(inner, large),
        Ty::Tuple(tys) => {
            for ty in tys {
                boxed(ty, large);
            }
        }
        _ => {}
    }
}

/// The estimated size of each named type once its own large members are boxed.
struct Sizes<'a> {
    by_name: &'a HashMap<&'a str, &'a ItemKind>,
    done: HashMap<String, usize>,
    /// The types being sized: a type met again inside itself is behind a `Box` already.
    visiting: HashSet<String>,
}

impl Sizes<'_> {
    fn item(&mut self, name: &str) -> usize {
        if let Some(size) = self.done.get(name) {
            return *size;
        }
        let Some(kind) = self.by_name.get(name).copied() else {
            return POINTER;
        };
        if !self.visiting.insert(name.to_owned()) {
            return POINTER;
        }
        let size = match kind {
            ItemKind::Struct(structure) => {
                let extra = if structure.closed || structure.lenient {
                    0
                } else {
                    VALUE
                };
                structure
                    .fields
                    .iter()
                    .map(|field| self.held(&field.ty))
                    .sum::<usize>()
                    + extra
            }
            ItemKind::StringEnum { .. } => STRING,
            ItemKind::Untagged(variants) => {
                TAG + variants
                    .iter()
                    .map(|variant| self.held(&variant.ty))
                    .max()
                    .unwrap_or(0)
            }
            ItemKind::Tagged { variants, .. } => {
                TAG + variants
                    .iter()
                    .map(|variant| self.held(&variant.ty))
                    .max()
                    .unwrap_or(0)
            }
            ItemKind::Newtype(ty) => self.held(ty),
            ItemKind::Tuple(tys) => tys.iter().map(|ty| self.held(ty)).sum(),
            // An alias is its target, boxed or not where it is held.
            ItemKind::Alias(ty) => self.of(ty),
        };
        self.visiting.remove(name);
        self.done.insert(name.to_owned(), size);
        size
    }

    /// The size of `ty` where a type holds it: a large named type is boxed there.
    fn held(&mut self, ty: &Ty) -> usize {
        match ty {
            Ty::Named(name) => {
                let size = self.item(name);
                if size > LIMIT { POINTER } else { size }
            }
            Ty::Option(inner) | Ty::Nullable(inner) => TAG + self.held(inner),
            Ty::Tuple(tys) => tys.iter().map(|ty| self.held(ty)).sum(),
            other => self.of(other),
        }
    }

    /// The size of `ty` itself (a named type unboxed).
    fn of(&mut self, ty: &Ty) -> usize {
        match ty {
            Ty::Bool => 1,
            Ty::Unit => 0,
            Ty::Int(_) | Ty::F64 => 8,
            Ty::String | Ty::Vec(_) | Ty::Map(_) | Ty::Path(_) => STRING,
            Ty::Value | Ty::Object => VALUE,
            Ty::Box(_) => POINTER,
            Ty::Named(name) => self.item(name),
            Ty::Option(inner) | Ty::Nullable(inner) => TAG + self.of(inner),
            Ty::Tuple(tys) => tys.iter().map(|ty| self.of(ty)).sum(),
        }
    }
}

/// A `Box`.
const POINTER: usize = 8;
/// An enum's tag, or an `Option`'s, with its padding.
const TAG: usize = 8;
/// A `String`, a `Vec` or a `BTreeMap`.
const STRING: usize = 24;
/// A `serde_json::Value` or `Map` (an `IndexMap` with `preserve_order`).
const VALUE: usize = 72;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::schema::{Field, Struct};

    fn structure(name: &str, fields: Vec<Ty>) -> Item {
        Item {
            name: name.to_owned(),
            doc: None,
            kind: ItemKind::Struct(Struct {
                fields: fields
                    .into_iter()
                    .enumerate()
                    .map(|(index, ty)| Field {
                        json_name: format!("f{index}"),
                        name: format!("f{index}"),
                        ty,
                        optional: true,
                        doc: None,
                        deprecated: false,
                    })
                    .collect(),
                closed: true,
                extra_name: String::new(),
                lenient: false,
            }),
        }
    }

    fn field_types(item: &Item) -> Vec<Ty> {
        match &item.kind {
            ItemKind::Struct(structure) => structure.fields.iter().map(|f| f.ty.clone()).collect(),
            _ => Vec::new(),
        }
    }

    fn named(name: &str) -> Ty {
        Ty::Named(name.to_owned())
    }

    #[test]
    fn only_large_types_are_boxed_and_only_where_held_inline() {
        let strings = |n| vec![Ty::String; n];
        let mut items = vec![vec![
            structure("Small", strings(2)),
            structure("Large", strings(20)),
            structure(
                "Holder",
                vec![
                    named("Small"),
                    Ty::Option(Box::new(named("Large"))),
                    Ty::Vec(Box::new(named("Large"))),
                ],
            ),
            Item {
                name: "LargeAlias".to_owned(),
                doc: None,
                kind: ItemKind::Alias(named("Large")),
            },
        ]];
        box_large_types(&mut items);
        assert_eq!(
            field_types(&items[0][2]),
            vec![
                named("Small"),
                Ty::Option(Box::new(Ty::Box(Box::new(named("Large"))))),
                Ty::Vec(Box::new(named("Large"))),
            ]
        );
        assert_eq!(items[0][3].kind, ItemKind::Alias(named("Large")));
    }

    #[test]
    fn sizes_that_multiply_with_nesting_are_cut_at_each_level() {
        // Ten levels, each holding its child three times: 3^10 strings inline unboxed.
        let mut items = vec![vec![structure("L0", vec![Ty::String; 3])]];
        for level in 1..10 {
            let child = named(&format!("L{}", level - 1));
            items[0].push(structure(&format!("L{level}"), vec![child; 3]));
        }
        box_large_types(&mut items);
        let by_name: HashMap<&str, &ItemKind> = items[0]
            .iter()
            .map(|item| (item.name.as_str(), &item.kind))
            .collect();
        let mut sizes = Sizes {
            by_name: &by_name,
            done: HashMap::new(),
            visiting: HashSet::new(),
        };
        for level in 0..10 {
            assert!(sizes.item(&format!("L{level}")) <= 3 * LIMIT, "L{level}");
        }
    }
}
