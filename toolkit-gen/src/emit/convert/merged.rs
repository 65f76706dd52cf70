//! Object members of an answer's union that nothing tells apart and that require nothing: one
//! lenient struct of all their properties.
//!
//! Stripe's `payment_method_options.card` is `anyOf [payment_intent_payment_method_options_card,
//! payment_intent_type_specific_payment_method_options_client]`: two objects of optional
//! properties, which no property tells apart (every object fits both lenient structs). An
//! untagged enum would read every value as its first member and drop what only the second
//! names; one struct of the properties of both reads every value as documented and drops
//! nothing. A property both declare with different schemas is the union of the two
//! (`setup_future_usage`: one string enum of both lists).
//!
//! Only an answer's: an input's struct is what a caller builds and the API checks, and one that
//! mixes the members' properties would let it build a value neither member allows.

use serde_json::{Map, Value, json};

use super::{Converter, Hint};
use crate::emit::schema::Ty;

impl Converter<'_> {
    /// The struct of every property of `objects` (members of a union at `pointer`), when they
    /// are an answer's objects that require nothing; `None` otherwise.
    pub(super) fn merged(
        &mut self,
        objects: &[(usize, &Value)],
        pointer: &str,
        hint: Hint,
    ) -> Option<Ty> {
        if self.lenient == 0 || objects.iter().any(|(_, member)| !self.lenient_at(member)) {
            return None;
        }
        let mut properties: Map<String, Value> = Map::new();
        for (_, member) in objects {
            let mut view = Map::new();
            if !self.object_view(member, 0, &mut view) {
                return None;
            }
            let requires = view
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|required| !required.is_empty());
            if requires {
                return None;
            }
            let declared = view.get("properties").and_then(Value::as_object);
            for (name, schema) in declared.into_iter().flatten() {
                match properties.get_mut(name) {
                    None => {
                        properties.insert(name.clone(), schema.clone());
                    }
                    Some(known) if known == schema => {}
                    Some(known) => {
                        let either = json!({ "anyOf": [known.take(), schema.clone()] });
                        *known = either;
                    }
                }
            }
        }
        let mut view = Map::new();
        view.insert("type".to_owned(), json!("object"));
        view.insert("properties".to_owned(), Value::Object(properties));
        Some(self.structure(&view, pointer, hint, None))
    }
}
