//! The intermediate model of the Rust types an input schema becomes: what [`convert`] makes and
//! [`rust`] writes. No front end and no writer knows the other's internals.
//!
//! [`convert`]: super::convert
//! [`rust`]: super::rust

/// A Rust type, as a field or a variant carries it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    /// `bool`.
    Bool,
    /// An integer type, by name (`i64`, `u32`, …).
    Int(&'static str),
    /// `f64`.
    F64,
    /// `String`.
    String,
    /// `()`: the JSON `null`.
    Unit,
    /// `serde_json::Value`: anything at all.
    Value,
    /// `serde_json::Map<String, Value>`: any object.
    Object,
    /// `Option<T>`: a property that may be left out, or (required) may be `null`.
    Option(Box<Ty>),
    /// `Nullable<T>` (the runtime's `codegen::Nullable`): a property that may be left out *and*
    /// may be `null`, three states an `Option` cannot tell apart.
    Nullable(Box<Ty>),
    /// `Vec<T>`.
    Vec(Box<Ty>),
    /// `BTreeMap<String, T>`: an object whose properties are all `T`.
    Map(Box<Ty>),
    /// A tuple: an array whose items each have their own type.
    Tuple(Vec<Ty>),
    /// `Box<T>`: where a type contains itself.
    Box(Box<Ty>),
    /// A type of the module, by name.
    Named(String),
    /// A type of the user's, by path: a replacement ([`Customizations`](super::Customizations)).
    Path(String),
}

impl Ty {
    /// This type, or it made optional (an `Option` is not wrapped again).
    pub(crate) fn optional(self) -> Ty {
        match self {
            Ty::Option(_) => self,
            other => Ty::Option(Box::new(other)),
        }
    }

    /// The type of a property that may be left out: `Option<T>`, or `Nullable<T>` when the
    /// value may be `null` (`T` is an `Option`, a `Value` or `()`), which an `Option` would
    /// read as left out and not write back.
    pub(crate) fn omissible(self) -> Ty {
        match self {
            Ty::Option(inner) => Ty::Nullable(inner),
            Ty::Value | Ty::Unit => Ty::Nullable(Box::new(self)),
            other => Ty::Option(Box::new(other)),
        }
    }
}

/// A named type of the module.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Item {
    /// Its Rust name, unique in the module.
    pub(crate) name: String,
    /// Its documentation, from the schema's `description` (or `title`).
    pub(crate) doc: Option<String>,
    /// What it is.
    pub(crate) kind: ItemKind,
}

/// The kinds of named types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ItemKind {
    /// A struct for an object schema.
    Struct(Struct),
    /// A unit-variant enum for a string `enum` or `const`.
    StringEnum {
        /// The listed values.
        variants: Vec<StringVariant>,
        /// Whether a value the schema does not list reads into an `Other(String)` variant: every
        /// enum's but one whose values tell a union's members apart (see
        /// [`Shared::deciding`](super::shared::Shared::deciding)).
        catch_all: bool,
    },
    /// An untagged enum whose variants hold different JSON kinds (`String`, `Vec<…>`, a struct).
    Untagged(Vec<Variant>),
    /// An internally tagged enum: objects told apart by the constant value of one property.
    Tagged {
        /// The JSON name of the property whose value tells the variants apart.
        tag: String,
        /// The variants, each holding a struct of the other properties.
        variants: Vec<TaggedVariant>,
    },
    /// A transparent newtype (`pub struct T(pub U);`): a named type for a schema that is no
    /// struct or enum but that something refers to by name (a recursive `$ref`).
    Newtype(Ty),
    /// A tuple struct (`pub struct T(pub A, pub B, …);`): an array whose items each have their
    /// own type, too many of them for a tuple (std's traits stop at 12).
    Tuple(Vec<Ty>),
    /// A type alias (`pub type T = U;`): the root type of an input that is no struct.
    Alias(Ty),
}

/// An object schema as a struct.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct Struct {
    /// The fields, in the schema's order.
    pub(crate) fields: Vec<Field>,
    /// Whether properties the schema does not name are refused (`deny_unknown_fields`);
    /// otherwise they are kept in a flattened `extra` map.
    pub(crate) closed: bool,
    /// The Rust name of the flattened map of extra properties, when the struct is open.
    pub(crate) extra_name: String,
    /// An answer's struct (or one an answer reaches): properties it does not name are
    /// accepted and ignored — neither refused nor kept in an `extra` map, whose flattening
    /// would hide the JSON path of an answer that does not fit.
    pub(crate) lenient: bool,
}

/// A field of a struct.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Field {
    /// The property's JSON name.
    pub(crate) json_name: String,
    /// The Rust name (a keyword is written raw).
    pub(crate) name: String,
    /// Its type: `Option` for a property that is not required, `Nullable` for one that is not
    /// required and may be `null`; a required `Option` is a property that may be `null` but must
    /// be there.
    pub(crate) ty: Ty,
    /// Whether the property may be left out (then `None` or `Absent` is not written).
    pub(crate) optional: bool,
    /// Its documentation.
    pub(crate) doc: Option<String>,
    /// Whether the property is `deprecated` (the field is `#[deprecated]`).
    pub(crate) deprecated: bool,
}

/// A variant of a string enum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StringVariant {
    /// The Rust name.
    pub(crate) name: String,
    /// The JSON string.
    pub(crate) value: String,
}

/// A variant of an untagged enum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Variant {
    /// The Rust name.
    pub(crate) name: String,
    /// What it holds.
    pub(crate) ty: Ty,
    /// Its documentation.
    pub(crate) doc: Option<String>,
}

/// A variant of a tagged enum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TaggedVariant {
    /// The Rust name.
    pub(crate) name: String,
    /// The tag property's value for it.
    pub(crate) value: String,
    /// The struct of the other properties.
    pub(crate) ty: Ty,
    /// Its documentation.
    pub(crate) doc: Option<String>,
}
