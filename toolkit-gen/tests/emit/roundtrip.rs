//! Round trips through the compiled goldens: a value of a generated type serialises to JSON the
//! runtime's input check accepts for its tool, and JSON with a property the schema does not name
//! is refused.
