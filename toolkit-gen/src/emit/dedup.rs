//! Types of the same body, made one: after every tool is converted, a type whose body (what it
//! is, its fields' documentation included, its own documentation not) equals an earlier type's
//! becomes an alias of that type (`pub type NullableSimpleUser = SimpleUser;`).
//!
//! Distinct schemas can give equal types: GitHub's `simple-user` and `nullable-simple-user`
//! (the same object, one of them nullable where used), a rule's `creation` and `deletion`, two
//! operations' inline `committer` and `author`. As aliases, their values pass from one call to
//! another, and every name a schema gave stays (adding an operation renames nothing). Equality is
//! decided with the aliases made so far (a struct of `NullableSimpleUser` fields equals one of
//! `SimpleUser` fields), until nothing changes.
//!
//! Kept apart: the tools' input types (one per tool, by design), types the user gives
//! attributes (an alias takes none), and two named schemas not documented as one thing
//! (Petstore's `Category` and `Tag`, both `{id, name}`, stay two types).

use std::collections::{HashMap, HashSet};

use super::customize::{Attributes, Matched};
use super::schema::{Item, ItemKind, Ty};

/// Makes the types of `items` of one body aliases of one of them: a named schema's type
/// (`named`) when there is one — the shortest name, then the first in alphabetical order —
/// else the first made. A named schema's type becomes an alias only of another named schema's
/// of the same (non-empty) documentation. `keep` are the names never made aliases (the tools'
/// inputs).
pub(crate) fn alias_equal_types(
    items: &mut [Vec<Item>],
    keep: &HashSet<String>,
    named: &HashSet<String>,
    attributes: &Attributes,
) {
    let aliasable = |item: &Item| -> bool {
        if keep.contains(&item.name) || matches!(item.kind, ItemKind::Alias(_)) {
            return false;
        }
        let mut scratch = Matched::default();
        if !attributes.of_type(&item.name, &mut scratch).is_empty() {
            return false;
        }
        match &item.kind {
            ItemKind::Struct(structure) => structure.fields.iter().all(|field| {
                attributes
                    .of_field(&item.name, &field.name, &mut scratch)
                    .is_empty()
            }),
            _ => true,
        }
    };
    let docs: HashMap<String, Option<String>> = items
        .iter()
        .flatten()
        .map(|item| (item.name.clone(), item.doc.clone()))
        .collect();
    let mut aliases: HashMap<String, String> = HashMap::new();
    // Each round makes the aliases that the last round's make visible; a few rounds suffice
    // (nesting depth), and each round only ever adds.
    let preferred = |name: &str| {
        (
            !named.contains(name),
            named
                .contains(name)
                .then_some((name.len(), name.to_owned())),
        )
    };
    loop {
        let mut groups: HashMap<ItemKind, Vec<&str>> = HashMap::new();
        let mut order = Vec::new();
        for item in items.iter().flatten() {
            if aliases.contains_key(&item.name) || !aliasable(item) {
                continue;
            }
            let body = renamed_kind(&item.kind, &aliases);
            let group = groups.entry(body).or_insert_with_key(|body| {
                order.push(body.clone());
                Vec::new()
            });
            group.push(&item.name);
        }
        let mut added = Vec::new();
        for body in &order {
            let Some(names) = groups.get(body).filter(|names| names.len() > 1) else {
                continue;
            };
            // `min_by_key` keeps the first of equals: the first made among unnamed types.
            let Some(canonical) = names.iter().copied().min_by_key(|name| preferred(name)) else {
                continue;
            };
            for name in names.iter().filter(|name| **name != canonical) {
                // Two named schemas are one type only when documented as one thing (GitHub's
                // `simple-user` and `nullable-simple-user`: "A GitHub user."); Petstore's
                // undocumented `Category` and `Tag` stay two types of one shape.
                let same_thing = || {
                    named.contains(canonical)
                        && docs
                            .get(*name)
                            .is_some_and(|doc| doc.is_some() && docs.get(canonical) == Some(doc))
                };
                if named.contains(*name) && !same_thing() {
                    continue;
                }
                added.push(((*name).to_owned(), canonical.to_owned()));
            }
        }
        if added.is_empty() {
            break;
        }
        aliases.extend(added);
    }
    if aliases.is_empty() {
        return;
    }
    // The other types keep the names their fields were given: `owner: NullableSimpleUser`
    // reads as the schema says, and is the same type.
    for item in items.iter_mut().flatten() {
        if let Some(target) = aliases.get(&item.name) {
            item.kind = ItemKind::Alias(Ty::Named(resolve(target, &aliases)));
        }
    }
}

/// The type `name` stands for at the end of a chain of aliases.
fn resolve(name: &str, aliases: &HashMap<String, String>) -> String {
    let mut name = name;
    // An alias always names an earlier type, so the chain ends; the bound is a guard.
    for _ in 0..aliases.len() {
        match aliases.get(name) {
            Some(next) => name = next,
            None => break,
        }
    }
    name.to_owned()
}

/// `kind` with every type it names that is an alias replaced by the type the alias stands for.
fn renamed_kind(kind: &ItemKind, aliases: &HashMap<String, String>) -> ItemKind {
    let ty = |ty: &Ty| renamed(ty, aliases);
    match kind {
        ItemKind::Struct(structure) => {
            let mut structure = structure.clone();
            for field in &mut structure.fields {
                field.ty = ty(&field.ty);
            }
            ItemKind::Struct(structure)
        }
        ItemKind::StringEnum { .. } => kind.clone(),
        ItemKind::Untagged(variants) => {
            let mut variants = variants.clone();
            for variant in &mut variants {
                variant.ty = ty(&variant.ty);
            }
            ItemKind::Untagged(variants)
        }
        ItemKind::Tagged { tag, variants } => {
            let mut variants = variants.clone();
            for variant in &mut variants {
                variant.ty = ty(&variant.ty);
            }
            ItemKind::Tagged {
                tag: tag.clone(),
                variants,
            }
        }
        ItemKind::Newtype(inner) => ItemKind::Newtype(ty(inner)),
        ItemKind::Tuple(items) => ItemKind::Tuple(items.iter().map(ty).collect()),
        ItemKind::Alias(inner) => ItemKind::Alias(ty(inner)),
    }
}

/// `ty` with every alias it names replaced by the type the alias stands for.
fn renamed(ty: &Ty, aliases: &HashMap<String, String>) -> Ty {
    let inner = |inner: &Ty| Box::new(renamed(inner, aliases));
    match ty {
        Ty::Named(name) if aliases.contains_key(name) => Ty::Named(resolve(name, aliases)),
        Ty::Option(t) => Ty::Option(inner(t)),
        Ty::Nullable(t) => Ty::Nullable(inner(t)),
        Ty::Vec(t) => Ty::Vec(inner(t)),
        Ty::Map(t) => Ty::Map(inner(t)),
        Ty::Box(t) => Ty::Box(inner(t)),
        Ty::Tuple(items) => Ty::Tuple(items.iter().map(|t| renamed(t, aliases)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::Customizations;
    use crate::emit::schema::{Field, Struct};

    fn structure(name: &str, field_ty: Ty) -> Item {
        Item {
            name: name.to_owned(),
            doc: Some(format!("The {name}.")),
            kind: ItemKind::Struct(Struct {
                fields: vec![Field {
                    json_name: "x".to_owned(),
                    name: "x".to_owned(),
                    ty: field_ty,
                    optional: false,
                    doc: None,
                    deprecated: false,
                }],
                closed: false,
                extra_name: "extra".to_owned(),
                lenient: true,
            }),
        }
    }

    #[test]
    fn equal_bodies_become_aliases_of_the_first_through_nested_aliases() {
        let mut items = vec![
            vec![
                structure("User", Ty::String),
                structure("Owner", Ty::Named("User".to_owned())),
            ],
            vec![
                structure("NullableUser", Ty::String),
                structure(
                    "Holder",
                    Ty::Option(Box::new(Ty::Named("NullableUser".to_owned()))),
                ),
                structure("Keeper", Ty::Option(Box::new(Ty::Named("User".to_owned())))),
                structure("ToolInput", Ty::String),
            ],
        ];
        let keep = HashSet::from(["ToolInput".to_owned()]);
        alias_equal_types(
            &mut items,
            &keep,
            &HashSet::new(),
            &Attributes::new(&Customizations::default()),
        );
        let kind = |name: &str| {
            items
                .iter()
                .flatten()
                .find(|item| item.name == name)
                .map(|item| item.kind.clone())
                .unwrap_or(ItemKind::Alias(Ty::Value))
        };
        assert_eq!(
            kind("NullableUser"),
            ItemKind::Alias(Ty::Named("User".to_owned()))
        );
        // Equal once `NullableUser` is `User`.
        assert_eq!(
            kind("Keeper"),
            ItemKind::Alias(Ty::Named("Holder".to_owned()))
        );
        assert!(matches!(kind("Holder"), ItemKind::Struct(_)));
        // Fields keep the names they were given.
        assert_eq!(
            kind("Holder"),
            structure(
                "Holder",
                Ty::Option(Box::new(Ty::Named("NullableUser".to_owned())))
            )
            .kind
        );
        assert!(matches!(kind("Owner"), ItemKind::Struct(_)));
        // A tool's input stays its own type; its own documentation stays on each alias.
        assert!(matches!(kind("ToolInput"), ItemKind::Struct(_)));
        let holder = items.iter().flatten().find(|item| item.name == "Holder");
        assert!(holder.is_some_and(|item| item.doc.as_deref() == Some("The Holder.")));
    }
}
