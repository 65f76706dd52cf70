//! One Rust type per named schema across a module: the types of `$defs` (and `definitions`)
//! entries, shared by every tool whose schema refers to them.
//!
//! The runtime's OpenAPI reader gives each operation an input schema that stands alone, with
//! the document's schemas it reaches copied under its `$defs` (`#/components/schemas/Pet` as
//! `#/$defs/Pet`). The emitter converts such an entry once for the whole module and names it
//! after its key (`Pet`), whichever tool meets it first; a later tool whose entry of that name has
//! the same content — the entry and every schema it reaches, compared by a 128-bit fingerprint —
//! gets the same type. An entry of the same name but other content (two MCP tools' unrelated
//! `$defs/Item`) gets a type of its own (`Item2`).
//!
//! A tool's schema may instead name its entries (`"$defs": ["Pet", "Tag"]`, as the reader writes
//! them with `shared_defs`), the entries being the module's ([`place`]): each is then read,
//! fingerprinted and converted once for the module, however many tools name it.
//!
//! Names do not depend on the order tools are read: every key of every tool's `$defs` is
//! reserved, sorted, before any type is named ([`Shared::reserve`]), so adding an operation to a
//! document never renames an existing named type.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{DefaultHasher, Hasher};
use std::io;

use serde_json::Value;
use toolkit_core::JsonObject;

use super::Untyped;
use super::naming::{self, Scope};
use super::schema::{Item, ItemKind, Ty};

/// A named schema's identity: its key and the fingerprint of its content (the entry and every
/// schema it reaches).
pub(crate) type Key = (String, u128);

/// What converting a named schema made, kept for the next tool that meets it.
#[derive(Debug)]
struct Entry {
    /// Its type.
    ty: Ty,
    /// The places typed as `Value` while converting it (its pointers are the same in every
    /// tool: `#/$defs/<key>/…`).
    untyped: Vec<Untyped>,
    /// The named schemas it reached, whose places count as its own.
    reached: Vec<Key>,
}

/// The named types of a module.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// The fingerprints of the module's shared entries (those tools name rather than hold),
    /// the same for every tool.
    pub(crate) fingerprints: Fingerprints,
    /// The type name reserved for each key, before any other type was named.
    reserved: HashMap<String, String>,
    /// The keys whose reserved name is taken by content converted already.
    used: HashSet<String>,
    entries: HashMap<Key, Entry>,
    /// The places typed as `Value` of each named schema and every schema it reaches, once
    /// every one of those is converted ([`Shared::get`]).
    closures: RefCell<HashMap<Key, Vec<Untyped>>>,
    /// The string enums made so far, by their values in order: an anonymous enum of the same
    /// values is that type again (GitHub's `direction: asc | desc` on a hundred operations).
    enums: HashMap<Vec<String>, String>,
    /// The anonymous types made so far (an inline object or union, named after its place), by
    /// their documentation and body: one of the same is that type again.
    anonymous: HashMap<(Option<String>, ItemKind), String>,
    /// The keys of the named schemas some answer reaches: their types are lenient.
    pub(crate) lenient: HashSet<String>,
    /// The value sets of the string properties that tell a union's object members apart
    /// (`data_type: text | number | date` against `single_select`). An enum of such values has
    /// no catch-all variant, wherever it is used: with one, the first member would read every
    /// other member's value.
    pub(crate) deciding: HashSet<BTreeSet<String>>,
}

/// The JSON pointers (without `#`) of the containers of named schemas.
pub(crate) const CONTAINERS: [&str; 2] = ["$defs", "definitions"];

impl Shared {
    /// Reserves in `types` the names of every named schema of `schemas` (the tools' inputs
    /// and answers), in sorted order.
    pub(crate) fn reserve_schemas(&mut self, schemas: &[&JsonObject], types: &mut Scope) {
        let keys: BTreeSet<&str> = schemas
            .iter()
            .flat_map(|schema| entry_names(schema))
            .collect();
        for key in keys {
            let name = types.unique(&naming::type_name(key), "");
            self.reserved.insert(key.to_owned(), name);
        }
    }

    /// The type converted already for `key`, with its places typed as `Value` (those of the
    /// named schemas it reached included).
    pub(crate) fn get(&self, key: &Key) -> Option<(Ty, Vec<Untyped>)> {
        let entry = self.entries.get(key)?;
        if let Some(untyped) = self.closures.borrow().get(key) {
            return Some((entry.ty.clone(), untyped.clone()));
        }
        let mut untyped = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![key];
        // Whether every schema reached is converted: only then is the list final (one still
        // being converted, in a cycle, may add places).
        let mut complete = true;
        while let Some(key) = stack.pop() {
            if !seen.insert(key) {
                continue;
            }
            match self.entries.get(key) {
                Some(entry) => {
                    untyped.extend(entry.untyped.iter().cloned());
                    stack.extend(entry.reached.iter());
                }
                None => complete = false,
            }
        }
        let mut places = HashSet::new();
        untyped.retain(|u| places.insert(u.pointer.clone()));
        // Kept: on Stripe's document, whose schemas nearly all reach one another, walking the
        // ~490 schemas an answer reaches at each of its references was a tenth of the run.
        if complete {
            self.closures
                .borrow_mut()
                .insert(key.clone(), untyped.clone());
        }
        Some((entry.ty.clone(), untyped))
    }

    /// The name for the named schema `key` not converted yet: the one reserved for its key, or,
    /// when content of that key took it already, a new one from it.
    pub(crate) fn name(&mut self, key: &str, types: &mut Scope) -> String {
        match self.reserved.get(key) {
            Some(name) if self.used.insert(key.to_owned()) => name.clone(),
            Some(name) => types.unique(name, ""),
            None => types.unique(&naming::type_name(key), ""),
        }
    }

    /// The string enum of exactly these values made already, if any.
    pub(crate) fn string_enum(&self, values: &[String]) -> Option<&str> {
        self.enums.get(values).map(String::as_str)
    }

    /// Records the string enum `name` of `values` (the first of the same values is kept).
    pub(crate) fn add_string_enum(&mut self, values: Vec<String>, name: &str) {
        self.enums.entry(values).or_insert_with(|| name.to_owned());
    }

    /// The names of the types of named schemas (`$defs` entries).
    pub(crate) fn named_types(&self) -> HashSet<String> {
        self.entries
            .values()
            .filter_map(|entry| match &entry.ty {
                Ty::Named(name) => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// Takes the catch-all variant off the string enums of `items` whose values tell a union's
    /// members apart ([`Shared::deciding`]); run once every tool is converted, since a union
    /// met later may be told apart by an enum made earlier.
    pub(crate) fn close_deciding(&self, items: &mut [Item]) {
        if self.deciding.is_empty() {
            return;
        }
        for item in items {
            if let ItemKind::StringEnum {
                variants,
                catch_all,
            } = &mut item.kind
            {
                let values: BTreeSet<String> = variants.iter().map(|v| v.value.clone()).collect();
                if self.deciding.contains(&values) {
                    *catch_all = false;
                }
            }
        }
    }

    /// The name of the anonymous type of this documentation and body made already, if any;
    /// otherwise records `name` as it.
    pub(crate) fn anonymous(
        &mut self,
        doc: Option<String>,
        kind: ItemKind,
        name: &str,
    ) -> Option<String> {
        match self.anonymous.entry((doc, kind)) {
            std::collections::hash_map::Entry::Occupied(found) => Some(found.get().clone()),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(name.to_owned());
                None
            }
        }
    }

    /// Keeps what converting `key` made.
    pub(crate) fn insert(&mut self, key: Key, ty: Ty, untyped: Vec<Untyped>, reached: Vec<Key>) {
        self.entries.insert(
            key,
            Entry {
                ty,
                untyped,
                reached,
            },
        );
    }
}

/// The keys of the named schemas of `schema`: those its `$defs` (and `definitions`) hold, or
/// the names its `$defs` lists.
pub(crate) fn entry_names(schema: &JsonObject) -> impl Iterator<Item = &str> {
    CONTAINERS
        .iter()
        .filter_map(|container| schema.get(*container))
        .flat_map(|entries| -> Box<dyn Iterator<Item = &str> + '_> {
            match entries {
                Value::Object(held) => Box::new(held.keys().map(String::as_str)),
                Value::Array(named) => Box::new(named.iter().filter_map(Value::as_str)),
                _ => Box::new(std::iter::empty()),
            }
        })
}

/// Whether `root` names its `$defs` entries (a list of names) rather than holding them.
pub(crate) fn names_entries(root: &Value) -> bool {
    root.get("$defs").is_some_and(Value::is_array)
}

/// The schema at `pointer` (without `#`) of a tool's schema `root`: a place of `root`, or, when
/// `root` names its `$defs` entries, a place of the entry of `defs` (the module's) it leads
/// into (`/$defs/Pet/properties/tag`).
pub(crate) fn place<'v>(root: &'v Value, defs: &'v JsonObject, pointer: &str) -> Option<&'v Value> {
    if pointer.starts_with("/$defs/") && names_entries(root) {
        entry_place(defs, pointer)
    } else {
        root.pointer(pointer)
    }
}

/// The place `pointer` (`/$defs/Pet/properties/tag`) of an entry of `defs`, if it is one.
pub(crate) fn entry_place<'v>(defs: &'v JsonObject, pointer: &str) -> Option<&'v Value> {
    let rest = pointer.strip_prefix("/$defs/")?;
    let (token, inside) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
    defs.get(&token.replace("~1", "/").replace("~0", "~"))?
        .pointer(inside)
}

/// The key of a named schema's container and name for the pointer (without `#`) of an entry
/// (`/$defs/Pet` → `Pet`), if it is one.
pub(crate) fn named(pointer: &str) -> Option<String> {
    let mut tokens = pointer.split('/');
    match (tokens.next(), tokens.next(), tokens.next(), tokens.next()) {
        (Some(""), Some(container), Some(name), None) if CONTAINERS.contains(&container) => {
            Some(name.replace("~1", "/").replace("~0", "~"))
        }
        _ => None,
    }
}

/// Fingerprints of the schemas of one tool (or of a module's shared entries), each computed
/// once.
#[derive(Debug, Default)]
pub(crate) struct Fingerprints {
    /// The fingerprint of each place's own JSON and the local references in it.
    own: HashMap<String, (u128, Vec<String>)>,
    /// The fingerprint of each place and what it reaches, once asked.
    reaching: HashMap<String, u128>,
}

impl Fingerprints {
    /// The fingerprint of the schema at `pointer` (without `#`) and every schema it reaches by
    /// local references, `lookup` giving the schema at a pointer (the same for every call).
    pub(crate) fn of<'v>(
        &mut self,
        lookup: &dyn Fn(&str) -> Option<&'v Value>,
        pointer: &str,
    ) -> u128 {
        if let Some(known) = self.reaching.get(pointer) {
            return *known;
        }
        let mut reached = BTreeSet::new();
        let mut stack = vec![pointer.to_owned()];
        while let Some(place) = stack.pop() {
            if reached.contains(&place) {
                continue;
            }
            let (_, refs) = self.own(lookup, &place);
            stack.extend(refs.iter().cloned());
            reached.insert(place);
        }
        let mut low = DefaultHasher::new();
        let mut high = DefaultHasher::new();
        high.write_u8(0x5a);
        for place in &reached {
            let (own, _) = self.own(lookup, place);
            for hasher in [&mut low, &mut high] {
                hasher.write(place.as_bytes());
                hasher.write_u8(0xff);
                hasher.write_u128(*own);
            }
        }
        let fingerprint = (u128::from(high.finish()) << 64) | u128::from(low.finish());
        self.reaching.insert(pointer.to_owned(), fingerprint);
        fingerprint
    }

    fn own<'v>(
        &mut self,
        lookup: &dyn Fn(&str) -> Option<&'v Value>,
        place: &str,
    ) -> &(u128, Vec<String>) {
        self.own.entry(place.to_owned()).or_insert_with(|| {
            let Some(schema) = lookup(place) else {
                return (0, Vec::new());
            };
            let mut writer = HashWriter::default();
            // Writing into a hasher cannot fail.
            let _ = serde_json::to_writer(&mut writer, schema);
            (writer.finish(), references(schema))
        })
    }
}

/// The JSON pointers (without `#`) the local references inside `schema` lead to, in the order
/// they are met.
pub(super) fn references(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    match (key.as_str(), child) {
                        ("$ref" | "$recursiveRef", Value::String(reference)) => {
                            if let Some(pointer) = reference.strip_prefix('#') {
                                out.push(pointer.to_owned());
                            }
                        }
                        _ => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// Two hashers fed the same bytes (one salted): a 128-bit fingerprint of what is written.
struct HashWriter {
    low: DefaultHasher,
    high: DefaultHasher,
}

impl Default for HashWriter {
    fn default() -> Self {
        let mut high = DefaultHasher::new();
        high.write_u8(0xa5);
        Self {
            low: DefaultHasher::new(),
            high,
        }
    }
}

impl HashWriter {
    fn finish(&self) -> u128 {
        (u128::from(self.high.finish()) << 64) | u128::from(self.low.finish())
    }
}

impl io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.low.write(bytes);
        self.high.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_are_named_by_key() {
        assert_eq!(named("/$defs/Pet").as_deref(), Some("Pet"));
        assert_eq!(named("/definitions/a~1b").as_deref(), Some("a/b"));
        assert_eq!(named("/properties/pet"), None);
        assert_eq!(named("/$defs/Pet/properties/tag"), None);
    }

    #[test]
    fn a_fingerprint_covers_what_an_entry_reaches() {
        let one = json!({"$defs": {
            "Pet": {"properties": {"tag": {"$ref": "#/$defs/Tag"}}},
            "Tag": {"type": "string"}
        }});
        let two = json!({"$defs": {
            "Pet": {"properties": {"tag": {"$ref": "#/$defs/Tag"}}},
            "Tag": {"type": "integer"}
        }});
        let same = json!({"$defs": {
            "Other": {"type": "boolean"},
            "Pet": {"properties": {"tag": {"$ref": "#/$defs/Tag"}}},
            "Tag": {"type": "string"}
        }});
        let of = |root: &Value| Fingerprints::default().of(&|p| root.pointer(p), "/$defs/Pet");
        assert_ne!(of(&one), of(&two));
        assert_eq!(of(&one), of(&same));
        // A cycle ends.
        let cycle = json!({"$defs": {"Pet": {"items": {"$ref": "#/$defs/Pet"}}}});
        assert_ne!(of(&cycle), 0);
    }

    #[test]
    fn a_named_entry_is_the_module_entry_of_its_name() {
        let defs = json!({"Pet": {"properties": {"tag": {"type": "string"}}}});
        let defs = defs.as_object().unwrap();
        let named = json!({"properties": {}, "$defs": ["Pet"]});
        let held = json!({"$defs": {"Pet": {"type": "integer"}}});
        assert_eq!(
            place(&named, defs, "/$defs/Pet/properties/tag"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(place(&named, defs, "/properties"), Some(&json!({})));
        assert_eq!(place(&named, defs, "/$defs/Tag"), None);
        assert_eq!(
            place(&held, defs, "/$defs/Pet"),
            Some(&json!({"type": "integer"}))
        );
        let names: Vec<&str> = entry_names(named.as_object().unwrap()).collect();
        assert_eq!(names, ["Pet"]);
    }
}
