//! JSON Schema → the type model of [`schema`](super::schema).
//!
//! One [`Converter`] per tool walks its input schema from the root, making a named type per
//! object, string enum and union, and following local `$ref`s (into `$defs`, `definitions` or
//! any JSON pointer of the schema itself, as zod writes them). Whatever it cannot type becomes
//! `serde_json::Value` where it stands and is listed with its JSON pointer and reason: a tool is
//! never dropped and nothing panics, whatever the schema.
//!
//! Unions (`oneOf` / `anyOf`) have a file of their own: [`union`], and object members told
//! apart by their properties another: [`apart`].
//!
//! Recursion: a reference to a schema still being converted (a back-edge) names its type, and is
//! boxed unless a `Vec` or a map already stands between the type and itself.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};
use toolkit_core::JsonObject;

use super::customize::Matched;
use super::naming::{self, Scope};
use super::schema::{Field, Item, ItemKind, StringVariant, Struct, Ty};
use super::shared::{self, Fingerprints, Key, Shared};
use super::{EmitOptions, Strictness, Untyped};

mod apart;
mod constraints;
mod kind;
mod merged;
mod union;

/// How deep schemas may nest (objects in arrays in objects …) before the rest is a `Value`:
/// deeper than any real input (the corpus' deepest is 8) and far from the stack's end.
const MAX_DEPTH: usize = 64;

/// Keywords that say something of a schema without constraining the value's shape.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "example",
    "readOnly",
    "writeOnly",
    "deprecated",
    "nullable",
    "$comment",
    "$schema",
];

/// The most items an array becomes a tuple for: std implements `Debug` and `PartialEq` for
/// tuples of up to 12 items; an array of more is a tuple struct.
const LONGEST_TUPLE: usize = 12;

/// The name an item is to get: one reserved already (`fixed`, for a `$ref` target or the root),
/// or made unique from `base`.
#[derive(Clone, Debug)]
struct Hint {
    base: String,
    fixed: Option<String>,
}

impl Hint {
    fn new(base: String) -> Self {
        Self { base, fixed: None }
    }

    fn fixed(name: String) -> Self {
        Self {
            base: name.clone(),
            fixed: Some(name),
        }
    }

    /// The hint for a type inside this one (`PetTag` inside `Pet`).
    fn child(&self, suffix: &str) -> Self {
        Self::new(format!("{}{}", self.base, suffix))
    }
}

/// What converting one tool's input schema made.
#[derive(Debug)]
pub(crate) struct Converted {
    /// The name of the input's type.
    pub(crate) root_type: String,
    /// The named types, the root's first.
    pub(crate) items: Vec<Item>,
    /// The places typed as `serde_json::Value` for want of a better type.
    pub(crate) untyped: Vec<Untyped>,
    /// The type replacements used.
    pub(crate) matched: Matched,
}

/// The module-wide state a tool's conversion names its types in: the names taken (shared by the
/// module's tools so that no two collide) and the named schemas' types.
pub(crate) struct ModuleTypes<'m> {
    /// The type names taken.
    pub(crate) types: &'m mut Scope,
    /// The types of named schemas (`$defs` entries), one per distinct schema.
    pub(crate) shared: &'m mut Shared,
    /// The `$defs` entries of the module, for the tools that name theirs (see
    /// [`shared::place`]); empty when each tool holds its own.
    pub(crate) defs: &'m JsonObject,
}

/// Converts the input schema `root` of the tool `tool_name`, naming its types in `module`.
/// `doc` documents the root type.
pub(crate) fn convert_tool(
    tool_name: &str,
    root: &Value,
    doc: Option<String>,
    options: &EmitOptions,
    module: ModuleTypes<'_>,
) -> Converted {
    let prefix = naming::type_name(tool_name);
    let root_type = module.types.unique(&format!("{prefix}Input"), "");
    convert_root(root_type, root, doc, options, module, false)
}

/// Converts the answer schema `root` of the tool `tool_name` (the root type
/// `{Tool}Answer`), naming its types in `module`. Answer types are lenient: their structs
/// accept properties they do not name (no `deny_unknown_fields`).
pub(crate) fn convert_answer(
    tool_name: &str,
    root: &Value,
    doc: Option<String>,
    options: &EmitOptions,
    module: ModuleTypes<'_>,
) -> Converted {
    let prefix = naming::type_name(tool_name);
    let root_type = module.types.unique(&format!("{prefix}Answer"), "");
    convert_root(root_type, root, doc, options, module, true)
}

/// Converts `root` as the type `root_type`; `answer` for an answer's (lenient) types.
fn convert_root(
    root_type: String,
    root: &Value,
    doc: Option<String>,
    options: &EmitOptions,
    module: ModuleTypes<'_>,
    answer: bool,
) -> Converted {
    let mut converter = Converter {
        root,
        defs: module.defs,
        names_entries: shared::names_entries(root),
        options,
        types: module.types,
        shared: module.shared,
        fingerprints: Fingerprints::default(),
        keys: HashMap::new(),
        reached: Vec::new(),
        items: Vec::new(),
        created: HashSet::new(),
        untyped: Vec::new(),
        done: HashMap::new(),
        in_progress: HashMap::new(),
        targets: reference_targets(root),
        depth: 0,
        lenient: usize::from(answer),
        matched: Matched::default(),
    };
    let doc = doc.as_deref().map(line_breaks);
    let ty = converter.target("", root, root_type.clone());
    if converter.created.contains(&root_type) {
        if let (Some(item), Some(doc)) = (
            converter.items.iter_mut().find(|i| i.name == root_type),
            doc,
        ) {
            item.doc = Some(doc);
        }
    } else {
        // The input is no struct (a map, a `Value`, …): the root type names it.
        converter.items.insert(
            0,
            Item {
                name: root_type.clone(),
                doc,
                kind: ItemKind::Alias(ty),
            },
        );
    }
    Converted {
        root_type,
        items: converter.items,
        untyped: converter.untyped,
        matched: converter.matched,
    }
}

/// Escapes a JSON pointer token (`~` → `~0`, `/` → `~1`).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The documentation of a schema: its description, else its title.
fn doc_of(schema: &Value) -> Option<String> {
    let map = schema.as_object()?;
    ["description", "title"]
        .iter()
        .filter_map(|key| map.get(*key).and_then(Value::as_str))
        .map(str::trim)
        .find(|text| !text.is_empty())
        .map(line_breaks)
}

/// `text` with every line break a `\n`: a lone `\r` (old Mac line ends, found by fuzzing) would
/// stay inside a `///` line, where rustc refuses a bare CR.
fn line_breaks(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_owned()
    }
}

/// The Rust integer type of an `integer` with this `format`.
fn int_type(format: Option<&str>) -> &'static str {
    match format {
        Some("int8") => "i8",
        Some("int16") => "i16",
        Some("int32") => "i32",
        Some("uint8") => "u8",
        Some("uint16") => "u16",
        Some("uint32") => "u32",
        Some("uint64") => "u64",
        _ => "i64",
    }
}

/// Whether a schema accepts only `null`.
fn is_null_schema(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => !types.is_empty() && types.iter().all(|t| t == "null"),
        _ => {
            map.get("const") == Some(&Value::Null)
                || map
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|values| !values.is_empty() && values.iter().all(Value::is_null))
        }
    }
}

/// Whether a schema accepts nothing (`false`, `{ "not": {} }`: zod's "undefined").
fn is_never_schema(schema: &Value) -> bool {
    match schema {
        Value::Bool(false) => true,
        Value::Object(map) => {
            map.get("not").is_some_and(|not| {
                not == &Value::Bool(true) || not.as_object().is_some_and(Map::is_empty)
            }) && map
                .keys()
                .all(|k| k == "not" || ANNOTATIONS.contains(&k.as_str()))
        }
        _ => false,
    }
}

/// The one member of an `allOf` wrapper (`{ title, allOf: [{ $ref }] }`), which has no shape of
/// its own.
fn wrapped(schema: &Value) -> Option<&Value> {
    let map = schema.as_object()?;
    if map
        .keys()
        .any(|k| k != "allOf" && !ANNOTATIONS.contains(&k.as_str()))
    {
        return None;
    }
    let mut shaping = map
        .get("allOf")?
        .as_array()?
        .iter()
        .filter(|m| !is_annotation_like(m, 0));
    match (shaping.next(), shaping.next()) {
        (Some(member), None) => Some(member),
        _ => None,
    }
}

/// Whether a `type` says "an object" (perhaps "or null", which the field's `Option` carries).
fn is_object_type(value: &Value) -> bool {
    match value {
        Value::String(t) => t == "object",
        Value::Array(types) => {
            types.iter().any(|t| t == "object")
                && types.iter().all(|t| t == "object" || t == "null")
        }
        _ => false,
    }
}

/// Whether an `allOf` member only annotates the others: annotations, "an object", "or null" —
/// the OpenAPI 3.0 idioms `allOf: [{$ref}, {nullable: true, description}]` as the runtime's
/// reader writes them in 2020-12.
fn is_annotation_like(schema: &Value, depth: usize) -> bool {
    let Some(map) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if depth > 4 {
        return false;
    }
    map.iter().all(|(key, value)| match key.as_str() {
        "type" => is_object_type(value) || is_null_schema(schema),
        "anyOf" | "oneOf" => value.as_array().is_some_and(|members| {
            members
                .iter()
                .all(|m| is_null_schema(m) || is_annotation_like(m, depth + 1))
        }),
        key => ANNOTATIONS.contains(&key),
    })
}

/// Keywords that give a schema a shape of its own (a type, members, a target).
const SHAPING: &[&str] = &[
    "type",
    "properties",
    "additionalProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "$ref",
    "$recursiveRef",
    "allOf",
    "anyOf",
    "oneOf",
];

/// Whether a schema only constrains a value its parent types (`{ "required": [...] }`,
/// `{ "format": "ipv4" }`), naming no shape of its own.
fn is_constraint_only(schema: &Value) -> bool {
    schema
        .as_object()
        .is_some_and(|map| map.keys().all(|k| !SHAPING.contains(&k.as_str())))
}

/// Whether a union member only narrows properties its parent object declares: an object
/// schema of `properties` (each one the parent has), `required` names the parent declares,
/// `additionalProperties: true` and annotations.
fn refines(member: &Value, parent: &Map<String, Value>) -> bool {
    let Some(map) = member.as_object() else {
        return false;
    };
    map.iter().all(|(key, value)| match key.as_str() {
        "type" => value == "object",
        "properties" => value
            .as_object()
            .is_some_and(|properties| properties.keys().all(|name| parent.contains_key(name))),
        "required" => value.as_array().is_some_and(|names| {
            names
                .iter()
                .all(|name| name.as_str().is_some_and(|name| parent.contains_key(name)))
        }),
        "additionalProperties" => value == &Value::Bool(true),
        key => ANNOTATIONS.contains(&key),
    })
}

/// Walks one tool's input schema.
struct Converter<'a> {
    root: &'a Value,
    /// The module's `$defs` entries, which `root` names when `names_entries`.
    defs: &'a JsonObject,
    names_entries: bool,
    options: &'a EmitOptions,
    types: &'a mut Scope,
    /// The module's named types.
    shared: &'a mut Shared,
    /// The fingerprints of this tool's named schemas.
    fingerprints: Fingerprints,
    /// The key of each named schema of this tool met so far, by JSON pointer.
    keys: HashMap<String, Key>,
    /// Every named schema reached so far, in order (a named schema's own reach is the part
    /// after its start).
    reached: Vec<Key>,
    items: Vec<Item>,
    created: HashSet<String>,
    untyped: Vec<Untyped>,
    /// The type of each reference target converted (by JSON pointer).
    done: HashMap<String, Ty>,
    /// Reference targets being converted: their reserved name and whether a back-edge used it.
    in_progress: HashMap<String, (String, bool)>,
    /// The places of the schema some reference leads to (JSON pointers without the `#`): met
    /// where they stand, they are converted once as a reference target, so that a schema that
    /// refers into its own properties (zod's `$refStrategy: root`) gets one type, not two.
    targets: HashSet<String>,
    depth: usize,
    /// Above 0 while converting what an answer reaches: structs accept unknown properties.
    lenient: usize,
    /// The type replacements used.
    matched: Matched,
}

/// The JSON pointers (without `#`) that the local references of `root` lead to.
fn reference_targets(root: &Value) -> HashSet<String> {
    super::shared::references(root).into_iter().collect()
}

impl<'a> Converter<'a> {
    fn untyped(&mut self, pointer: &str, reason: impl Into<String>) -> Ty {
        self.untyped.push(Untyped {
            pointer: pointer.to_owned(),
            reason: reason.into(),
        });
        Ty::Value
    }

    /// The name an item gets from `hint`.
    fn item_name(&mut self, hint: &mut Hint) -> String {
        match hint.fixed.take() {
            Some(name) => name,
            None => self.types.unique(&hint.base, ""),
        }
    }

    /// Reserves a slot for an item, so that a type comes before the types inside it.
    fn reserve(&mut self, name: &str) -> usize {
        self.created.insert(name.to_owned());
        self.items.push(Item {
            name: name.to_owned(),
            doc: None,
            kind: ItemKind::Alias(Ty::Value),
        });
        self.items.len() - 1
    }

    /// Fills the slot of the item `name`, or, for an anonymous item (`anonymous`: named after its
    /// place) whose documentation and body an anonymous type of the module has already, drops
    /// the slot and names that type. Only the current item's descendants come after its slot,
    /// and they are done: dropping it moves no slot still to be filled.
    fn settle(
        &mut self,
        slot: usize,
        name: String,
        anonymous: bool,
        doc: Option<String>,
        kind: ItemKind,
    ) -> Ty {
        // An empty struct stays the type of its place: merging it with every other empty one
        // would name a type after an unrelated place and save nothing.
        let empty = matches!(&kind, ItemKind::Struct(structure) if structure.fields.is_empty());
        if anonymous
            && !empty
            && let Some(existing) = self.shared.anonymous(doc.clone(), kind.clone(), &name)
            && slot < self.items.len()
        {
            self.items.remove(slot);
            self.created.remove(&name);
            return Ty::Named(existing);
        }
        self.fill(slot, doc, kind);
        Ty::Named(name)
    }

    fn fill(&mut self, slot: usize, doc: Option<String>, kind: ItemKind) {
        if let Some(item) = self.items.get_mut(slot) {
            item.doc = doc;
            item.kind = kind;
        }
    }

    /// Resolves a local reference to its target and the target's JSON pointer (`#/$defs/Pet`).
    fn resolve(&self, reference: &str) -> Option<(&'a Value, String)> {
        let pointer = reference.strip_prefix('#')?;
        let target = shared::place(self.root, self.defs, pointer)?;
        Some((target, pointer.to_owned()))
    }

    /// `schema` with references followed (a few steps, never in circles), for looking at its
    /// shape.
    fn follow<'s>(&self, mut schema: &'s Value) -> &'s Value
    where
        'a: 's,
    {
        for _ in 0..16 {
            let reference = schema
                .get("$ref")
                .and_then(Value::as_str)
                .or_else(|| schema.get("$recursiveRef").and_then(Value::as_str));
            if let Some((target, _)) = reference.and_then(|r| self.resolve(r)) {
                schema = target;
            } else if let Some(member) = wrapped(schema) {
                schema = member;
            } else {
                return schema;
            }
        }
        schema
    }

    fn convert(&mut self, schema: &Value, pointer: &str, hint: Hint, indirect: bool) -> Ty {
        if self.depth >= MAX_DEPTH {
            return self.untyped(pointer, "nested deeper than the emitter goes");
        }
        if let Some(place) = pointer.strip_prefix('#')
            && self.targets.contains(place)
            && !self.in_progress.contains_key(place)
            && shared::place(self.root, self.defs, place).is_some_and(|at| std::ptr::eq(at, schema))
        {
            // A place some reference leads to, met where it stands: converted as its target.
            if let Some(ty) = self.done.get(place) {
                return ty.clone();
            }
            let mut hint = hint;
            let reserved = self.item_name(&mut hint);
            return self.target(place, schema, reserved);
        }
        self.depth += 1;
        let ty = self.convert_inner(schema, pointer, hint, indirect);
        self.depth -= 1;
        ty
    }

    fn convert_inner(&mut self, schema: &Value, pointer: &str, hint: Hint, indirect: bool) -> Ty {
        let map = match schema {
            Value::Bool(true) => return Ty::Value,
            Value::Bool(false) => return self.untyped(pointer, "a schema that accepts nothing"),
            Value::Object(map) => map,
            _ => return self.untyped(pointer, "not a schema"),
        };
        let reference = map.get("$ref").or_else(|| map.get("$recursiveRef"));
        if let Some(reference) = reference {
            return match reference.as_str() {
                Some(reference) => self.reference(reference, pointer, hint, indirect),
                None => self.untyped(pointer, "a `$ref` that is not a string"),
            };
        }
        if let Some(members) = map.get("allOf") {
            return self.all_of(map, members, pointer, hint, indirect);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(members) = map.get(key) {
                let Some(members) = members.as_array() else {
                    return self.untyped(pointer, format!("`{key}` is not an array"));
                };
                let own_shape = map.contains_key("type") || map.contains_key("properties");
                if own_shape && members.iter().all(is_constraint_only) {
                    continue;
                }
                // Members that only narrow the object's own properties (GitHub's `checks/update`:
                // `status: completed` requires `conclusion`): the object's struct holds every
                // value they allow.
                if let Some(Value::Object(properties)) = map.get("properties")
                    && members.iter().all(|m| refines(m, properties))
                {
                    continue;
                }
                return self.union(members, &format!("{pointer}/{key}"), hint);
            }
        }
        let types: Vec<&str> = match map.get("type") {
            None => Vec::new(),
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => {
                let names: Option<Vec<&str>> = list.iter().map(Value::as_str).collect();
                match names {
                    Some(names) => names,
                    None => return self.untyped(pointer, "a `type` list that is not of strings"),
                }
            }
            Some(_) => return self.untyped(pointer, "a `type` that is not a string"),
        };
        let nullable = types.contains(&"null");
        let types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
        let ty = if let Some(constant) = map.get("const") {
            self.constant(constant, pointer, hint)
        } else if let Some(values) = map.get("enum") {
            self.enumeration(map, values, pointer, hint)
        } else {
            match types.as_slice() {
                [] if nullable => Ty::Unit,
                [] if map.contains_key("properties")
                    || map.contains_key("additionalProperties") =>
                {
                    self.object(map, pointer, hint)
                }
                // `items` without `type` says what a list holds, not that the value is one: JSON
                // Schema lets it be an object or a string as well (a chat API's conversation
                // object is one), so it is any value.
                [] => Ty::Value,
                [single] => self.single(single, map, pointer, hint),
                // `type: [a, b]`: the union of one schema per type.
                several => {
                    let members: Vec<Value> = several
                        .iter()
                        .map(|t| {
                            let mut member = map.clone();
                            member.insert("type".to_owned(), Value::String((*t).to_owned()));
                            Value::Object(member)
                        })
                        .collect();
                    self.union(&members, &format!("{pointer}/type"), hint)
                }
            }
        };
        if nullable { ty.optional() } else { ty }
    }

    fn single(&mut self, name: &str, map: &Map<String, Value>, pointer: &str, hint: Hint) -> Ty {
        if matches!(name, "string" | "integer" | "number")
            && let Some(format) = map.get("format").and_then(Value::as_str)
            && let Some(path) = self.options.customizations.formats.get(format)
        {
            self.matched.formats.insert(format.to_owned());
            return Ty::Path(path.clone());
        }
        match name {
            "string" => Ty::String,
            "boolean" => Ty::Bool,
            "integer" => Ty::Int(int_type(map.get("format").and_then(Value::as_str))),
            "number" => Ty::F64,
            "array" => self.array(map, pointer, hint),
            "object" => self.object(map, pointer, hint),
            other => self.untyped(pointer, format!("the unknown type `{other}`")),
        }
    }

    /// Whether `target` (at `pointer`) is only a reference that, through references alone,
    /// leads back to itself: a schema with no shape, whose type would contain only itself
    /// (`struct Loop(Box<Loop>)` has no value, and reading one would recurse without end).
    fn leads_back(&self, pointer: &str, target: &Value) -> bool {
        let mut target = target;
        for _ in 0..16 {
            let reference = target
                .get("$ref")
                .and_then(Value::as_str)
                .or_else(|| target.get("$recursiveRef").and_then(Value::as_str));
            let Some((next, next_pointer)) = reference.and_then(|r| self.resolve(r)) else {
                return false;
            };
            if next_pointer == pointer {
                return true;
            }
            target = next;
        }
        false
    }

    /// Converts a reference target once, under the name `reserved`, and records its type.
    fn target(&mut self, pointer: &str, target: &Value, reserved: String) -> Ty {
        if self.leads_back(pointer, target) {
            let ty = self.untyped(
                &format!("#{pointer}"),
                "a `$ref` that leads back to itself, through references alone",
            );
            self.done.insert(pointer.to_owned(), ty.clone());
            return ty;
        }
        self.in_progress
            .insert(pointer.to_owned(), (reserved.clone(), false));
        let ty = self.convert(
            target,
            &format!("#{pointer}"),
            Hint::fixed(reserved.clone()),
            false,
        );
        let used = self
            .in_progress
            .remove(pointer)
            .is_some_and(|(_, used)| used);
        let ty = if self.created.contains(&reserved) || !used {
            ty
        } else {
            // Something refers to it by name, and it is no struct or enum: a newtype names it.
            self.created.insert(reserved.clone());
            self.items.push(Item {
                name: reserved.clone(),
                doc: doc_of(target),
                kind: ItemKind::Newtype(ty),
            });
            Ty::Named(reserved)
        };
        self.done.insert(pointer.to_owned(), ty.clone());
        ty
    }

    fn reference(&mut self, reference: &str, pointer: &str, hint: Hint, indirect: bool) -> Ty {
        let Some((target, target_pointer)) = self.resolve(reference) else {
            return self.untyped(
                pointer,
                format!("the reference `{reference}` leads nowhere"),
            );
        };
        if let Some(ty) = self.done.get(&target_pointer) {
            return ty.clone();
        }
        if let Some((name, used)) = self.in_progress.get_mut(&target_pointer) {
            *used = true;
            let ty = Ty::Named(name.clone());
            if let Some(key) = self.keys.get(&target_pointer) {
                self.reached.push(key.clone());
            }
            return if indirect { ty } else { Ty::Box(Box::new(ty)) };
        }
        let Some(name) = shared::named(&target_pointer) else {
            // A place of the schema that is no named schema (zod's `#/properties/a`): this
            // tool's own.
            let reserved = self.types.unique(&hint.base, "");
            return self.target(&target_pointer, target, reserved);
        };
        if let Some(path) = self.options.customizations.schemas.get(&name) {
            self.matched.schemas.insert(name);
            return Ty::Path(path.clone());
        }
        let fingerprint = if self.names_entries {
            // The module's entries are the same for every tool: fingerprinted once.
            let defs = self.defs;
            let lookup = |place: &str| shared::entry_place(defs, place);
            self.shared.fingerprints.of(&lookup, &target_pointer)
        } else {
            let root = self.root;
            self.fingerprints
                .of(&|place| root.pointer(place), &target_pointer)
        };
        let key: Key = (name.clone(), fingerprint);
        self.reached.push(key.clone());
        if let Some((ty, untyped)) = self.shared.get(&key) {
            let known: HashSet<&str> = self.untyped.iter().map(|u| u.pointer.as_str()).collect();
            let new: Vec<Untyped> = untyped
                .into_iter()
                .filter(|u| !known.contains(u.pointer.as_str()))
                .collect();
            self.untyped.extend(new);
            self.done.insert(target_pointer, ty.clone());
            return ty;
        }
        self.keys.insert(target_pointer.clone(), key.clone());
        let reserved = self.shared.name(&name, self.types);
        let (untyped_from, reached_from) = (self.untyped.len(), self.reached.len());
        // A named schema some answer reaches is lenient wherever it is met, so that inputs and
        // answers share its one type.
        let lenient = self.shared.lenient.contains(&name);
        self.lenient += usize::from(lenient);
        let ty = self.target(&target_pointer, target, reserved);
        self.lenient -= usize::from(lenient);
        let untyped = self
            .untyped
            .get(untyped_from..)
            .unwrap_or_default()
            .to_vec();
        let reached = self
            .reached
            .get(reached_from..)
            .unwrap_or_default()
            .iter()
            .filter(|reached| **reached != key)
            .cloned()
            .collect();
        self.shared.insert(key, ty.clone(), untyped, reached);
        ty
    }

    /// The object an `allOf` member is, with references followed and its own `allOf` merged.
    fn object_view(&self, schema: &Value, depth: usize, into: &mut Map<String, Value>) -> bool {
        if depth > 16 {
            return false;
        }
        let schema = self.follow(schema);
        let Some(map) = schema.as_object() else {
            return schema == &Value::Bool(true);
        };
        for (key, value) in map {
            match key.as_str() {
                "allOf" => {
                    let Some(members) = value.as_array() else {
                        return false;
                    };
                    for member in members {
                        if !self.object_view(member, depth + 1, into) {
                            return false;
                        }
                    }
                }
                "type" if !is_object_type(value) => return false,
                "properties" => {
                    let Some(properties) = value.as_object() else {
                        return false;
                    };
                    let merged = into
                        .entry("properties")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Some(merged) = merged.as_object_mut() {
                        for (name, property) in properties {
                            merged
                                .entry(name.clone())
                                .or_insert_with(|| property.clone());
                        }
                    }
                }
                "required" => {
                    let Some(required) = value.as_array() else {
                        return false;
                    };
                    let merged = into
                        .entry("required")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Some(merged) = merged.as_array_mut() {
                        merged.extend(required.iter().cloned());
                    }
                }
                "additionalProperties" => {
                    if value == &Value::Bool(false) || !into.contains_key(key) {
                        into.insert(key.clone(), value.clone());
                    }
                }
                "oneOf" | "anyOf" | "enum" | "const" | "items" | "prefixItems" | "not" => {
                    return false;
                }
                _ => {
                    into.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
        true
    }

    fn all_of(
        &mut self,
        map: &Map<String, Value>,
        members: &Value,
        pointer: &str,
        hint: Hint,
        indirect: bool,
    ) -> Ty {
        let Some(members) = members.as_array() else {
            return self.untyped(pointer, "`allOf` is not an array");
        };
        let shaping: Vec<(usize, &Value)> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| !is_annotation_like(m, 0))
            .collect();
        let own_shape = map
            .keys()
            .any(|k| k != "allOf" && !ANNOTATIONS.contains(&k.as_str()));
        if let ([(index, member)], false) = (shaping.as_slice(), own_shape) {
            // A wrapper (`allOf: [{ $ref }]`, perhaps with annotations): the member itself.
            return self.convert(member, &format!("{pointer}/allOf/{index}"), hint, indirect);
        }
        let mut merged = Map::new();
        let parent = Value::Object(map.clone());
        if !self.object_view(&parent, 0, &mut merged) {
            return self.untyped(pointer, "an `allOf` whose members are not all objects");
        }
        merged.remove("allOf");
        merged.insert("type".to_owned(), Value::String("object".to_owned()));
        self.convert(&Value::Object(merged), pointer, hint, indirect)
    }

    fn constant(&mut self, value: &Value, pointer: &str, hint: Hint) -> Ty {
        match value {
            Value::String(s) => self.string_enum(std::slice::from_ref(s), pointer, hint),
            Value::Bool(_) => Ty::Bool,
            Value::Number(n) if n.is_i64() => Ty::Int("i64"),
            Value::Number(n) if n.is_u64() => Ty::Int("u64"),
            Value::Number(_) => Ty::F64,
            Value::Null => Ty::Unit,
            _ => self.untyped(pointer, "a `const` that is an array or an object"),
        }
    }

    fn enumeration(
        &mut self,
        map: &Map<String, Value>,
        values: &Value,
        pointer: &str,
        hint: Hint,
    ) -> Ty {
        let Some(values) = values.as_array() else {
            return self.untyped(pointer, "`enum` is not an array");
        };
        let nullable = values.iter().any(Value::is_null);
        let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
        let strings: Option<Vec<String>> = values
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect();
        let ty = if values.is_empty() {
            Ty::Unit
        } else if let Some(strings) = strings {
            self.string_enum(&strings, pointer, hint)
        } else if values.iter().all(|v| v.is_i64()) {
            Ty::Int(int_type(map.get("format").and_then(Value::as_str)))
        } else if values.iter().all(|v| v.is_number()) {
            Ty::F64
        } else if values.iter().all(|v| v.is_boolean()) {
            Ty::Bool
        } else {
            self.untyped(pointer, "an `enum` of values of several kinds")
        };
        if nullable { ty.optional() } else { ty }
    }

    fn string_enum(&mut self, values: &[String], _pointer: &str, mut hint: Hint) -> Ty {
        let mut seen = HashSet::new();
        let values: Vec<String> = values
            .iter()
            .filter(|value| seen.insert(value.as_str()))
            .cloned()
            .collect();
        // An anonymous enum of values an enum has already is that enum; a named schema's is a
        // type of its own, named after its key.
        if hint.fixed.is_none()
            && let Some(name) = self.shared.string_enum(&values)
        {
            return Ty::Named(name.to_owned());
        }
        let name = self.item_name(&mut hint);
        let slot = self.reserve(&name);
        let mut scope = Scope::default();
        let variants = values
            .iter()
            .map(|value| StringVariant {
                name: scope.unique(&naming::type_name(value), ""),
                value: value.clone(),
            })
            .collect();
        self.fill(
            slot,
            None,
            ItemKind::StringEnum {
                variants,
                catch_all: true,
            },
        );
        self.shared.add_string_enum(values, &name);
        Ty::Named(name)
    }

    fn array(&mut self, map: &Map<String, Value>, pointer: &str, hint: Hint) -> Ty {
        let tuple = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(items)), _) => Some(("prefixItems", items)),
            (None, Some(Value::Array(items))) => Some(("items", items)),
            _ => None,
        };
        if let Some((key, items)) = tuple {
            if items.is_empty() {
                return Ty::Vec(Box::new(Ty::Value));
            }
            if items.len() > LONGEST_TUPLE {
                return self.tuple_struct(map, items, &format!("{pointer}/{key}"), hint);
            }
            let types = items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    self.convert(
                        item,
                        &format!("{pointer}/{key}/{index}"),
                        hint.child(&format!("Item{index}")),
                        false,
                    )
                })
                .collect();
            return Ty::Tuple(types);
        }
        match map.get("items") {
            Some(items) => Ty::Vec(Box::new(self.convert(
                items,
                &format!("{pointer}/items"),
                hint.child("Item"),
                true,
            ))),
            None => Ty::Vec(Box::new(Ty::Value)),
        }
    }

    /// A tuple struct for an array of more items than std's tuples implement `Debug` and
    /// `PartialEq` for (serde reads and writes it as the same JSON array).
    fn tuple_struct(
        &mut self,
        map: &Map<String, Value>,
        items: &[Value],
        pointer: &str,
        mut hint: Hint,
    ) -> Ty {
        let anonymous = hint.fixed.is_none();
        let name = self.item_name(&mut hint);
        let slot = self.reserve(&name);
        let types = items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                self.convert(
                    item,
                    &format!("{pointer}/{index}"),
                    Hint::new(format!("{name}Item{index}")),
                    false,
                )
            })
            .collect();
        self.settle(
            slot,
            name,
            anonymous,
            doc_of(&Value::Object(map.clone())),
            ItemKind::Tuple(types),
        )
    }

    fn object(&mut self, map: &Map<String, Value>, pointer: &str, hint: Hint) -> Ty {
        let has_properties = map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        let additional = map.get("additionalProperties");
        if !has_properties {
            match additional {
                Some(Value::Bool(false)) => {}
                Some(schema @ Value::Object(inner)) if !inner.is_empty() => {
                    return Ty::Map(Box::new(self.convert(
                        schema,
                        &format!("{pointer}/additionalProperties"),
                        hint.child("Value"),
                        true,
                    )));
                }
                _ => return Ty::Object,
            }
        }
        self.structure(map, pointer, hint, None)
    }

    /// Whether the struct of the object schema `map` refuses properties it does not name, as the
    /// strictness says (a lenient struct, an answer's, never does: see [`Self::lenient_at`]).
    fn closes(&self, map: &Map<String, Value>) -> bool {
        match self.options.strictness {
            Strictness::Strict => true,
            Strictness::FollowSchema => {
                map.get("additionalProperties") == Some(&Value::Bool(false))
            }
        }
    }

    /// Whether the struct `member` becomes is lenient (accepts properties it does not name): a
    /// named schema's is when some answer reaches it, wherever it is met; an inline one's when
    /// it is converted for an answer. References (and `allOf` wrappers) are followed to the
    /// last named schema, whose type the member's is.
    fn lenient_at(&self, member: &Value) -> bool {
        let mut schema = member;
        let mut named = None;
        for _ in 0..16 {
            let reference = schema
                .get("$ref")
                .and_then(Value::as_str)
                .or_else(|| schema.get("$recursiveRef").and_then(Value::as_str));
            if let Some((target, pointer)) = reference.and_then(|r| self.resolve(r)) {
                if let Some(name) = shared::named(&pointer) {
                    named = Some(self.shared.lenient.contains(&name));
                }
                schema = target;
            } else if let Some(inner) = wrapped(schema) {
                schema = inner;
            } else {
                break;
            }
        }
        named.unwrap_or(self.lenient > 0)
    }

    /// A struct for an object schema, leaving out the property `skip` (a tag).
    fn structure(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        mut hint: Hint,
        skip: Option<&str>,
    ) -> Ty {
        let anonymous = hint.fixed.is_none();
        let name = self.item_name(&mut hint);
        let slot = self.reserve(&name);
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut scope = Scope::default();
        let mut fields = Vec::new();
        let properties = map.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            for (json_name, property) in properties {
                if Some(json_name.as_str()) == skip {
                    continue;
                }
                let field_pointer = format!("{pointer}/properties/{}", escape(json_name));
                let ty = self.convert(
                    property,
                    &field_pointer,
                    Hint::new(format!("{name}{}", naming::type_name(json_name))),
                    false,
                );
                let optional = !required.contains(json_name.as_str());
                let doc = match (
                    doc_of(property),
                    constraints::describe(property, self.follow(property)),
                ) {
                    (Some(doc), Some(bounds)) => Some(format!("{doc}\n\n{bounds}")),
                    (doc, bounds) => doc.or(bounds),
                };
                fields.push(Field {
                    json_name: json_name.clone(),
                    name: scope.unique(&naming::field_name(json_name), "_"),
                    ty: if optional { ty.omissible() } else { ty },
                    optional,
                    doc,
                    deprecated: property.get("deprecated") == Some(&Value::Bool(true)),
                });
            }
        }
        // A required name the schema does not describe (real documents have them): any value,
        // but one that must be there.
        let mut missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|name| {
                Some(*name) != skip && !properties.is_some_and(|p| p.contains_key(*name))
            })
            .collect();
        missing.sort_unstable();
        for json_name in missing {
            fields.push(Field {
                json_name: json_name.to_owned(),
                name: scope.unique(&naming::field_name(json_name), "_"),
                ty: Ty::Value,
                optional: false,
                doc: None,
                deprecated: false,
            });
        }
        let lenient = self.lenient > 0;
        let closed = !lenient && self.closes(map);
        let extra_name = scope.unique("extra", "_");
        self.settle(
            slot,
            name,
            anonymous,
            doc_of(&Value::Object(map.clone())),
            ItemKind::Struct(Struct {
                fields,
                closed,
                extra_name,
                lenient,
            }),
        )
    }
}
