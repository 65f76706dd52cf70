//! Round trips through the compiled goldens: a value of a generated type serialises to JSON the
//! runtime's input check accepts for its tool, and JSON with a property the schema does not name
//! is refused by serde.

use serde_json::{Value, json};
use toolkit_runtime::input::InputCheck;

use crate::common::forms;

/// The strict golden, compiled here: it must build warning-free under this crate's lints.
#[allow(dead_code)]
mod strict {
    include!("golden/forms.rs");
}

/// The schema-following golden.
#[allow(dead_code)]
mod follow {
    include!("golden/forms_follow.rs");
}

/// The runtime's check of the fixture tool `tool`.
fn check(tool: &str) -> InputCheck {
    let definitions = forms();
    let definition = definitions.iter().find(|d| d.name() == tool).unwrap();
    InputCheck::new(definition.input_schema())
}

#[track_caller]
fn accepted(tool: &str, value: &Value) {
    if let Err(e) = check(tool).check(value) {
        panic!("{tool} refuses {value}: {e:?}");
    }
}

// `nickname` is a deprecated property: naming it is a user's use of a deprecated field.
#[allow(deprecated)]
fn basics() -> strict::ObjectBasicsInput {
    strict::ObjectBasicsInput {
        pet_id: 7,
        r#type: "dog".to_owned(),
        r#ref: None,
        if_match: Some("etag".to_owned()),
        start_time: None,
        start_time_before: Some("2026-01-01".to_owned()),
        start_time_after: None,
        count: Some(3),
        ratio: Some(0.5),
        enabled: Some(true),
        tags: Some(vec!["a".to_owned()]),
        anything: json!({ "free": [1, 2] }).into(),
        owner: Some(strict::ObjectBasicsInputOwner {
            name: "Ada".to_owned(),
        }),
        // Required but not described: any value, which must be there.
        ghost: json!("boo"),
        nickname: None,
    }
}

#[test]
fn a_struct_serialises_to_input_the_runtime_accepts_and_reads_back() {
    let value = serde_json::to_value(basics()).unwrap();
    assert_eq!(
        value,
        json!({
            "petId": 7, "type": "dog", "if-match": "etag", "StartTime<": "2026-01-01",
            "count": 3, "ratio": 0.5, "enabled": true, "tags": ["a"],
            "anything": { "free": [1, 2] }, "owner": { "name": "Ada" }, "ghost": "boo"
        })
    );
    accepted("object_basics", &value);
    let back: strict::ObjectBasicsInput = serde_json::from_value(value).unwrap();
    assert_eq!(back, basics());
}

#[test]
fn an_unknown_field_is_refused_at_every_depth() {
    let mut value = serde_json::to_value(basics()).unwrap();
    value["petid"] = json!(8);
    let error = serde_json::from_value::<strict::ObjectBasicsInput>(value)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown field `petid`"), "{error}");
    let mut value = serde_json::to_value(basics()).unwrap();
    value["owner"]["age"] = json!(3);
    let error = serde_json::from_value::<strict::ObjectBasicsInput>(value)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown field `age`"), "{error}");
    // A missing required field too.
    assert!(serde_json::from_value::<strict::ObjectBasicsInput>(json!({ "type": "x" })).is_err());
}

#[test]
fn enum_values_that_differ_only_in_case_stay_apart() {
    use strict::{
        EnumsInput, EnumsInputMaybe, EnumsInputOrder, EnumsInputReaction, EnumsInputSize,
    };
    let input = EnumsInput {
        order: EnumsInputOrder::Asc2,
        reaction: Some(EnumsInputReaction::Minus1),
        size: Some(EnumsInputSize::Empty2),
        maybe: EnumsInputMaybe::Off.into(),
        level: Some(2),
    };
    let value = serde_json::to_value(&input).unwrap();
    assert_eq!(
        value,
        json!({ "order": "asc", "reaction": "-1", "size": "/", "maybe": "off", "level": 2 })
    );
    accepted("enums", &value);
    let upper: EnumsInput = serde_json::from_value(json!({ "order": "ASC" })).unwrap();
    assert_eq!(upper.order, EnumsInputOrder::Asc);
    // A value the schema does not list reads into the catch-all (so that an answer still reads
    // when a server adds a value) and is written back as it came; the tool's input check still
    // refuses it.
    let unlisted: EnumsInput = serde_json::from_value(json!({ "order": "Asc" })).unwrap();
    assert_eq!(unlisted.order, EnumsInputOrder::Other("Asc".to_owned()));
    assert_eq!(unlisted.order.as_str(), "Asc");
    let back = serde_json::to_value(&unlisted).unwrap();
    assert_eq!(back, json!({ "order": "Asc" }));
    assert!(check("enums").check(&back).is_err());
    assert!("Asc".parse::<EnumsInputOrder>().is_err());
}

#[test]
fn string_enums_read_and_write_their_json_strings() {
    use strict::{EnumsInputOrder, EnumsInputReaction};
    assert_eq!(EnumsInputOrder::Asc2.as_str(), "asc");
    assert_eq!(EnumsInputReaction::Minus1.to_string(), "-1");
    assert_eq!(EnumsInputOrder::VALUES, ["ASC", "asc", "DESC", "desc"]);
    for value in EnumsInputOrder::VALUES {
        let parsed: EnumsInputOrder = value.parse().unwrap();
        assert_eq!(parsed.as_str(), *value);
        assert_eq!(serde_json::to_value(parsed).unwrap(), json!(value));
    }
    let error = "Asc".parse::<EnumsInputOrder>().unwrap_err();
    assert_eq!(error.value(), "Asc");
    assert_eq!(
        error.to_string(),
        r#""Asc" is not one of "ASC", "asc", "DESC", "desc""#
    );
}

#[test]
fn consts_nullables_and_tuples_round_trip() {
    use toolkit_core::codegen::Nullable;
    let input = strict::ConstsAndNullsInput {
        kind: strict::ConstsAndNullsInputKind::Fixed,
        version: Some(2),
        limit: None,
        cursor: Nullable::Value("c".to_owned()),
        gone: None,
    };
    let value = serde_json::to_value(&input).unwrap();
    // A required nullable property is written as `null`; an optional one left out.
    assert_eq!(
        value,
        json!({ "kind": "fixed", "version": 2, "limit": null, "cursor": "c" })
    );
    accepted("consts_and_nulls", &value);
    // An optional, nullable property has three states, each read back as itself.
    for (cursor, json_cursor) in [
        (Nullable::Absent, None),
        (Nullable::Null, Some(Value::Null)),
        (Nullable::Value("c".to_owned()), Some(json!("c"))),
    ] {
        let input = strict::ConstsAndNullsInput {
            cursor: cursor.clone(),
            ..input.clone()
        };
        let value = serde_json::to_value(&input).unwrap();
        assert_eq!(value.get("cursor"), json_cursor.as_ref());
        accepted("consts_and_nulls", &value);
        let back: strict::ConstsAndNullsInput = serde_json::from_value(value).unwrap();
        assert_eq!(back.cursor, cursor);
    }
    // A required, nullable property must be there: `null` is read, a missing one refused.
    let read = |value: Value| serde_json::from_value::<strict::ConstsAndNullsInput>(value);
    assert_eq!(
        read(json!({ "kind": "fixed", "limit": null }))
            .unwrap()
            .limit,
        None
    );
    assert_eq!(
        read(json!({ "kind": "fixed", "limit": 5 })).unwrap().limit,
        Some(5)
    );
    let missing = read(json!({ "kind": "fixed" })).unwrap_err();
    assert!(
        missing.to_string().contains("missing field `limit`"),
        "{missing}"
    );
    let tuples = strict::TuplesInput {
        point: (1.5, -2.0),
        pair: Some(("a".to_owned(), 3)),
        wide: None,
    };
    let value = serde_json::to_value(&tuples).unwrap();
    assert_eq!(value, json!({ "point": [1.5, -2.0], "pair": ["a", 3] }));
    accepted("tuples", &value);
    assert!(
        serde_json::from_value::<strict::TuplesInput>(json!({ "point": [1.0, 2.0, 3.0] })).is_err()
    );
    // Thirteen items: a tuple struct, the same JSON array.
    let wide = json!([1, 2, 3, 4, 5, 6, "a", "b", "c", "d", "e", "f", "g"]);
    let input = json!({ "point": [0.0, 0.0], "wide": wide });
    let tuples: strict::TuplesInput = serde_json::from_value(input.clone()).unwrap();
    let strict::TuplesInputWide(first, ..) = tuples.wide.clone().unwrap();
    assert_eq!(first, 1);
    assert_eq!(tuples.clone(), tuples);
    assert_eq!(serde_json::to_value(&tuples).unwrap(), input);
    accepted("tuples", &input);
    let short = json!({ "point": [0.0, 0.0], "wide": [1, 2, 3] });
    assert!(serde_json::from_value::<strict::TuplesInput>(short).is_err());
}

#[test]
fn maps_and_recursive_types_round_trip() {
    let input = strict::MapsInput {
        counts: Some([("a".to_owned(), 1)].into_iter().collect()),
        free: Some(json!({ "x": [true] }).as_object().unwrap().clone()),
        nothing: Some(strict::MapsInputNothing {}),
        ..Default::default()
    };
    let value = serde_json::to_value(&input).unwrap();
    accepted("maps", &value);
    assert!(serde_json::from_value::<strict::MapsInput>(json!({ "nothing": { "a": 1 } })).is_err());
    let leaf = strict::Node {
        label: "leaf".to_owned(),
        children: None,
        parent: None,
    };
    let tree = strict::RefsInput {
        tree: strict::Node {
            label: "root".to_owned(),
            children: Some(vec![leaf.clone()]),
            parent: Some(Box::new(leaf)),
        },
        legacy: Some(strict::Legacy::New),
        again: None,
        // A schema that is only a reference to itself: any value.
        r#loop: json!({ "any": "thing" }).into(),
    };
    let value = serde_json::to_value(&tree).unwrap();
    accepted("refs", &value);
    let back: strict::RefsInput = serde_json::from_value(value).unwrap();
    assert_eq!(back, tree);
}

#[test]
fn unions_round_trip_and_tagged_variants_stay_strict() {
    use strict::{UnionsInput, UnionsInputShape, UnionsInputShapeSquare, UnionsInputTarget};
    for (target, json_target) in [
        (UnionsInputTarget::Integer(3), json!(3)),
        (UnionsInputTarget::String("s".to_owned()), json!("s")),
        (UnionsInputTarget::Array(vec!["a".to_owned()]), json!(["a"])),
    ] {
        let input = UnionsInput {
            target,
            shape: Some(UnionsInputShape::Square(UnionsInputShapeSquare {
                side: 2.0,
            })),
            model: Some("o3".to_owned()),
            mode: Some(strict::UnionsInputMode::Slow),
            address: toolkit_core::codegen::Nullable::Absent,
            choice: toolkit_core::codegen::Nullable::Absent,
        };
        let value = serde_json::to_value(&input).unwrap();
        assert_eq!(value["target"], json_target);
        assert_eq!(value["shape"], json!({ "kind": "square", "side": 2.0 }));
        accepted("unions", &value);
        let back: UnionsInput = serde_json::from_value(value).unwrap();
        assert_eq!(back, input);
    }
    let object: UnionsInput = serde_json::from_value(json!({ "target": { "id": "x" } })).unwrap();
    assert!(matches!(object.target, UnionsInputTarget::Object(_)));
    // serde's internally tagged enums let unknown fields through unless the variant's struct
    // refuses them (serde-rs/serde#2123): it does.
    let error = serde_json::from_value::<UnionsInput>(json!({
        "target": 1, "shape": { "kind": "circle", "radius": 1.0, "colour": "red" }
    }))
    .unwrap_err();
    assert!(
        error.to_string().contains("colour") || error.to_string().contains("variant"),
        "{error}"
    );
    assert!(
        serde_json::from_value::<UnionsInput>(json!({ "target": 1, "shape": { "kind": "oval" } }))
            .is_err()
    );
}

#[test]
fn all_of_merges_round_trip() {
    let input = strict::AllOfInput {
        pet: Some(strict::AllOfInputPet {
            name: "Rex".to_owned(),
            color: "brown".to_owned(),
        }),
        base: Some(strict::Base {
            name: "b".to_owned(),
        }),
    };
    let value = serde_json::to_value(&input).unwrap();
    accepted("all_of", &value);
}

#[test]
fn open_objects_keep_their_extras_when_following_the_schema() {
    let value = json!({ "open": { "y": 1, "z": "kept" }, "closed": { "x": 2 } });
    let input: follow::OpenInput = serde_json::from_value(value.clone()).unwrap();
    let open = input.open.as_ref().unwrap();
    assert_eq!(open.extra.get("z"), Some(&json!("kept")));
    assert_eq!(serde_json::to_value(&input).unwrap(), value);
    accepted("open", &value);
    assert!(
        serde_json::from_value::<follow::OpenInput>(json!({ "closed": { "x": 2, "w": 1 } }))
            .is_err()
    );
    // Strict by default: the same extra is refused.
    assert!(serde_json::from_value::<strict::OpenInput>(value).is_err());
}

#[test]
fn unions_of_kinds_round_trip() {
    use strict::{
        MixedUnionsInput, MixedUnionsInputPrompt, MixedUnionsInputToolChoice,
        MixedUnionsInputToolChoiceObject, MixedUnionsInputToolChoiceObjectFunction,
        MixedUnionsInputToolChoiceString,
    };
    let cases = [
        (
            MixedUnionsInputToolChoice::String(MixedUnionsInputToolChoiceString::Auto),
            MixedUnionsInputPrompt::ArrayOfInteger(vec![1, 2]),
            json!({ "tool_choice": "auto", "prompt": [1, 2] }),
        ),
        (
            MixedUnionsInputToolChoice::Object(MixedUnionsInputToolChoiceObject::Function(
                MixedUnionsInputToolChoiceObjectFunction {
                    name: "f".to_owned(),
                },
            )),
            MixedUnionsInputPrompt::ArrayOfArray(vec![vec![3]]),
            json!({ "tool_choice": { "type": "function", "name": "f" }, "prompt": [[3]] }),
        ),
        (
            MixedUnionsInputToolChoice::String(MixedUnionsInputToolChoiceString::None),
            MixedUnionsInputPrompt::ArrayOfString(vec!["a".to_owned()]),
            json!({ "tool_choice": "none", "prompt": ["a"] }),
        ),
    ];
    for (tool_choice, prompt, expected) in cases {
        let input = MixedUnionsInput {
            tool_choice,
            prompt,
        };
        let value = serde_json::to_value(&input).unwrap();
        assert_eq!(value, expected);
        accepted("mixed_unions", &value);
        let back: MixedUnionsInput = serde_json::from_value(value).unwrap();
        assert_eq!(back, input);
    }
    assert!(
        serde_json::from_value::<MixedUnionsInput>(
            json!({ "tool_choice": { "type": "function", "name": "f", "x": 1 }, "prompt": "p" })
        )
        .is_err()
    );
}

#[test]
fn unions_told_apart_read_back_as_the_member_they_are() {
    use strict::{
        MoreUnionsInput, MoreUnionsInputDigests, MoreUnionsInputEditor, MoreUnionsInputField,
        MoreUnionsInputLabels, MoreUnionsInputOwner, MoreUnionsInputReview, MoreUnionsInputSize,
        MoreUnionsInputWhen,
    };
    use toolkit_core::codegen::Nullable;
    let read = |value: Value| -> MoreUnionsInput {
        accepted("more_unions", &value);
        let input: MoreUnionsInput = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&input).unwrap(), value);
        input
    };
    // Each value reads as its own member and is written back as the same JSON.
    let input = read(json!({
        "owner": null,
        "editor": { "id": "e" },
        "digests": { "attestation_ids": [1, 2] },
        "review": { "environment": "prod", "state": "approved" },
        "field": { "name": "f", "data_type": "single_select", "options": ["a"] },
        "labels": { "labels": [{ "name": "bug" }] },
        "when": "2024-01-01",
        "size": 3,
        "check": { "status": "completed", "conclusion": "ok" }
    }));
    assert_eq!(input.owner, Nullable::Null);
    assert!(matches!(
        input.editor,
        Nullable::Value(MoreUnionsInputEditor::Identity(ref identity)) if identity.id == "e"
    ));
    assert!(matches!(
        input.digests,
        Some(MoreUnionsInputDigests::AttestationIds(_))
    ));
    assert!(matches!(
        input.review,
        Some(MoreUnionsInputReview::StateRequired(_))
    ));
    assert!(matches!(
        input.field,
        Some(MoreUnionsInputField::Options(_))
    ));
    assert!(matches!(
        input.labels,
        Some(MoreUnionsInputLabels::LabelsOfObject(_))
    ));
    assert!(matches!(input.when, Some(MoreUnionsInputWhen::String(_))));
    assert_eq!(input.size, Some(MoreUnionsInputSize::Integer(3)));
    let input = read(json!({
        "digests": { "subject_digests": ["sha256:x"] },
        "review": { "environment": "prod", "comment": "fine" },
        "field": { "name": "f", "data_type": "date" },
        "labels": { "labels": ["bug"] },
        "when": { "from": "now" },
        "size": "large"
    }));
    assert!(input.owner.is_absent());
    assert!(matches!(
        input.digests,
        Some(MoreUnionsInputDigests::SubjectDigests(_))
    ));
    assert!(matches!(
        input.review,
        Some(MoreUnionsInputReview::CommentRequired(_))
    ));
    assert!(matches!(input.field, Some(MoreUnionsInputField::Text(_))));
    assert!(matches!(
        input.labels,
        Some(MoreUnionsInputLabels::LabelsOfString(_))
    ));
    assert!(matches!(input.when, Some(MoreUnionsInputWhen::Object(_))));
    assert_eq!(
        input.size,
        Some(MoreUnionsInputSize::String("large".to_owned()))
    );
    // Beside a reference, `{type: [object, null]}` allows an object that is not an `Identity`
    // (no `id`), and `{}` any value: each is kept as it is, not refused.
    let input = read(json!({ "owner": { "name": "Ada" }, "editor": "someone" }));
    assert!(matches!(
        input.owner,
        Nullable::Value(MoreUnionsInputOwner::Other(ref object)) if object["name"] == "Ada"
    ));
    assert_eq!(
        input.editor,
        Nullable::Value(MoreUnionsInputEditor::Other(json!("someone")))
    );
    // A value of both members at once fits neither.
    let both = json!({ "digests": { "subject_digests": [], "attestation_ids": [] } });
    assert!(serde_json::from_value::<MoreUnionsInput>(both).is_err());
    // A data type of neither member fits neither.
    let neither = json!({ "field": { "name": "f", "data_type": "iteration" } });
    assert!(serde_json::from_value::<MoreUnionsInput>(neither).is_err());
}

/// The answers golden: each fixture schema as a tool's `outputSchema`.
#[allow(dead_code, deprecated)]
mod answers {
    include!("golden/forms_answers.rs");
}

#[test]
fn answers_accept_unknown_properties_and_unlisted_enum_values() {
    use answers::{EnumsAnswer, EnumsAnswerOrder, ObjectBasicsAnswer};
    // A property the schema does not name, at the root and deeper, is ignored (never refused).
    let basics: ObjectBasicsAnswer = serde_json::from_value(json!({
        "petId": 7, "type": "dog", "ghost": 1, "added_later": true,
        "owner": { "name": "Ada", "since": 2020 }
    }))
    .unwrap();
    assert_eq!(basics.pet_id, 7);
    assert_eq!(basics.owner.unwrap().name, "Ada");
    // A value the schema does not list keeps the answer readable, and is written back as it
    // came.
    let enums: EnumsAnswer = serde_json::from_value(json!({ "order": "sideways" })).unwrap();
    assert_eq!(enums.order, EnumsAnswerOrder::Other("sideways".to_owned()));
    assert_eq!(
        serde_json::to_value(&enums).unwrap(),
        json!({ "order": "sideways" })
    );
    // A value of the wrong kind still fails, naming where.
    let error = toolkit_core::codegen::serde_path_to_error::deserialize::<_, ObjectBasicsAnswer>(
        json!({ "petId": "seven", "type": "dog", "ghost": 1 }),
    )
    .unwrap_err();
    assert_eq!(error.path().to_string(), "petId");
}

#[test]
fn answer_objects_nothing_tells_apart_read_into_one_struct_of_all_their_properties() {
    use answers::UnionsAnswerAddress;
    // `address` is `oneOf [{first}, {last}]`, both optional: every property of either is kept.
    let value = json!({ "first": "Ada", "last": "Lovelace" });
    let address: UnionsAnswerAddress = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(address.first.as_deref(), Some("Ada"));
    assert_eq!(address.last.as_deref(), Some("Lovelace"));
    assert_eq!(serde_json::to_value(&address).unwrap(), value);
}

#[test]
fn answer_unions_are_told_apart_and_their_deciding_enums_have_no_catch_all() {
    use answers::{
        MoreUnionsAnswer, MoreUnionsAnswerDigests, MoreUnionsAnswerField,
        MoreUnionsAnswerFieldOptionsDataType,
    };
    let read = |value: Value| -> MoreUnionsAnswer {
        let answer: MoreUnionsAnswer = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&answer).unwrap(), value);
        answer
    };
    // Each member's value reads as that member, whichever comes first in the enum.
    let answer = read(json!({
        "field": { "name": "f", "data_type": "single_select", "options": ["a"] },
        "digests": { "attestation_ids": [1] }
    }));
    assert!(matches!(
        answer.field,
        Some(MoreUnionsAnswerField::Options(ref options))
            if options.data_type == MoreUnionsAnswerFieldOptionsDataType::SingleSelect
    ));
    assert!(matches!(
        answer.digests,
        Some(MoreUnionsAnswerDigests::AttestationIds(_))
    ));
    let answer = read(json!({
        "field": { "name": "f", "data_type": "date" },
        "digests": { "subject_digests": ["sha256:x"] }
    }));
    assert!(matches!(answer.field, Some(MoreUnionsAnswerField::Text(_))));
    assert!(matches!(
        answer.digests,
        Some(MoreUnionsAnswerDigests::SubjectDigests(_))
    ));
    // The enums that tell the members apart have no catch-all: a value of neither member (or a
    // member's value missing what else tells it apart) is no value of the first.
    for field in [
        json!({ "name": "f", "data_type": "iteration" }),
        json!({ "name": "f", "data_type": "single_select" }),
    ] {
        let value = json!({ "field": field });
        assert!(
            serde_json::from_value::<MoreUnionsAnswer>(value.clone()).is_err(),
            "{value}"
        );
    }
    assert!(
        MoreUnionsAnswerFieldOptionsDataType::VALUES == ["single_select"]
            && MoreUnionsAnswerFieldOptionsDataType::SingleSelect.as_str() == "single_select"
    );
}
