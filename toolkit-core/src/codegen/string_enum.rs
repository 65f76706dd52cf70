//! What a generated string enum can do beyond its declaration: its values, `as_str`, `Display`,
//! `FromStr` and serde, written once here as a macro rather than forty lines per enum in every
//! generated module (GitHub's has 319 such enums: the impls were 0.43 MB of its 5 MB).

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer;
use serde::de::{Error, Unexpected, Visitor};

/// Implements the string enum `$name`, declared beside the call with exactly the variants named
/// here, each standing for its JSON string:
///
/// - `VALUES`, every listed value in order, and `as_str`;
/// - `Display` (the value) and `FromStr` (a listed value, else [`UnknownValue`](super::UnknownValue));
/// - serde: written as its string; read from a string, where a value not listed reads into the
///   catch-all variant named after `..` (`Other(String)`, for answers: an API adds values) or,
///   without one, is refused as serde's unknown variant (the enum tells a union's members apart,
///   or must be `Copy`).
///
/// ```
/// use toolkit_core::codegen::{self as __tk, serde_json};
///
/// #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
/// pub enum Status {
///     Available,
///     Sold,
///     /// A value the schema does not list.
///     Other(String),
/// }
/// __tk::string_enum!(Status { Available = "available", Sold = "sold", ..Other });
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
/// pub enum Kind {
///     Cat,
///     Dog,
/// }
/// __tk::string_enum!(Kind { Cat = "cat", Dog = "dog" });
///
/// assert_eq!(Status::VALUES, ["available", "sold"]);
/// assert_eq!(serde_json::to_string(&Status::Sold).unwrap(), r#""sold""#);
/// assert_eq!(serde_json::from_str::<Status>(r#""lost""#).unwrap(), Status::Other("lost".into()));
/// assert_eq!("lost".parse::<Status>().unwrap_err().to_string(), r#""lost" is not one of "available", "sold""#);
/// assert_eq!(Kind::Dog.to_string(), "dog");
/// let unknown = serde_json::from_str::<Kind>(r#""fox""#).unwrap_err().to_string();
/// assert_eq!(unknown, "unknown variant `fox`, expected `cat` or `dog` at line 1 column 5");
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __codegen_string_enum {
    ($name:ident { $($variant:ident = $value:literal),* , ..$other:ident }) => {
        impl $name {
            /// Every value the schema lists, in its order.
            pub const VALUES: &'static [&'static str] = &[$($value),*];

            /// The value as the JSON string it is.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $value,)*
                    Self::$other(value) => value,
                }
            }
        }

        impl<'de> $crate::codegen::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::codegen::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let value = $crate::codegen::string_enum_value(deserializer)?;
                ::std::result::Result::Ok(match &*value {
                    $($value => Self::$variant,)*
                    _ => Self::$other(value.into_owned()),
                })
            }
        }

        $crate::__codegen_string_enum!(@common $name { $($variant = $value),* });
    };
    ($name:ident { $($variant:ident = $value:literal),* $(,)? }) => {
        impl $name {
            /// Every value the schema lists, in its order.
            pub const VALUES: &'static [&'static str] = &[$($value),*];

            /// The value as the JSON string it is.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $(Self::$variant => $value,)*
                }
            }
        }

        impl<'de> $crate::codegen::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::codegen::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                // The index of one of `VALUES`, so in bounds.
                let index = $crate::codegen::string_enum_index(deserializer, Self::VALUES)?;
                ::std::result::Result::Ok([$(Self::$variant),*][index])
            }
        }

        $crate::__codegen_string_enum!(@common $name { $($variant = $value),* });
    };
    (@common $name:ident { $($variant:ident = $value:literal),* }) => {
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::codegen::UnknownValue;

            /// One of the listed values; any other is refused.
            fn from_str(value: &str) -> ::std::result::Result<Self, Self::Err> {
                match value {
                    $($value => ::std::result::Result::Ok(Self::$variant),)*
                    _ => ::std::result::Result::Err($crate::codegen::UnknownValue::new(
                        value,
                        Self::VALUES,
                    )),
                }
            }
        }

        impl $crate::codegen::serde::Serialize for $name {
            fn serialize<S: $crate::codegen::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}

/// Reads a string for a generated string enum, borrowed from the input where the format allows
/// (serde's `Cow<str>` always copies; a field of an answer should not allocate to be matched).
///
/// # Errors
///
/// Anything but a string.
pub fn string_enum_value<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Cow<'de, str>, D::Error> {
    struct Text;

    impl<'de> Visitor<'de> for Text {
        type Value = Cow<'de, str>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_borrowed_str<E: Error>(self, value: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(value))
        }

        fn visit_str<E: Error>(self, value: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(value.to_owned()))
        }

        fn visit_string<E: Error>(self, value: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(value))
        }

        fn visit_borrowed_bytes<E: Error>(self, value: &'de [u8]) -> Result<Self::Value, E> {
            std::str::from_utf8(value)
                .map(Cow::Borrowed)
                .map_err(|_| E::invalid_value(Unexpected::Bytes(value), &self))
        }

        fn visit_bytes<E: Error>(self, value: &[u8]) -> Result<Self::Value, E> {
            std::str::from_utf8(value)
                .map(|text| Cow::Owned(text.to_owned()))
                .map_err(|_| E::invalid_value(Unexpected::Bytes(value), &self))
        }
    }

    deserializer.deserialize_str(Text)
}

/// Reads one of `values` for a generated string enum without a catch-all: its index, or serde's
/// unknown-variant error, raised while the deserializer reads the string (so that serde_json's
/// error says where).
///
/// # Errors
///
/// Anything but a string, or a string that is none of `values`.
pub fn string_enum_index<'de, D: Deserializer<'de>>(
    deserializer: D,
    values: &'static [&'static str],
) -> Result<usize, D::Error> {
    struct Index(&'static [&'static str]);

    impl Index {
        fn find<E: Error>(&self, value: &str) -> Result<usize, E> {
            self.0
                .iter()
                .position(|known| *known == value)
                .ok_or_else(|| E::unknown_variant(value, self.0))
        }
    }

    impl Visitor<'_> for Index {
        type Value = usize;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("one of the enum's strings")
        }

        fn visit_str<E: Error>(self, value: &str) -> Result<Self::Value, E> {
            self.find(value)
        }

        fn visit_bytes<E: Error>(self, value: &[u8]) -> Result<Self::Value, E> {
            match std::str::from_utf8(value) {
                Ok(text) => self.find(text),
                Err(_) => Err(E::invalid_value(Unexpected::Bytes(value), &self)),
            }
        }
    }

    deserializer.deserialize_str(Index(values))
}
