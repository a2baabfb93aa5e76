//! Round trips: the model keeps every field and key order; containers keep the data.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// A JSON value for unknown fields: small, nested, any kind.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("x_[a-z]{1,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Unknown keys (prefixed so they never collide with spec names).
fn extras() -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec(("zz_[a-z]{1,8}", any_json()), 0..3)
}

fn entry() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec("\\PC{0,10}", 0..3),
        "\\PC{0,40}",
        any::<bool>(),
        -1000i64..1000,
        prop::option::of(any::<bool>()),
        extras(),
    )
        .prop_map(|(keys, content, enabled, order, sel, extra)| {
            let mut m = Map::new();
            for (k, v) in extra {
                m.insert(k, v);
            }
            m.insert("keys".into(), json!(keys));
            m.insert("content".into(), json!(content));
            m.insert("extensions".into(), json!({}));
            m.insert("enabled".into(), json!(enabled));
            m.insert("insertion_order".into(), json!(order));
            m.insert("use_regex".into(), json!(false));
            if let Some(s) = sel {
                m.insert("selective".into(), json!(s));
                m.insert("secondary_keys".into(), json!(["a"]));
            }
            Value::Object(m)
        })
}

fn card() -> impl Strategy<Value = Value> {
    (
        "\\PC{0,20}",
        "\\PC{0,60}",
        prop::collection::vec("\\PC{0,10}", 0..3),
        prop::option::of(prop::collection::vec(entry(), 0..4)),
        extras(),
        extras(),
        prop::option::of("\\PC{0,10}"),
    )
        .prop_map(
            |(name, desc, greetings, entries, data_extra, top_extra, nick)| {
                let mut data = Map::new();
                for (k, v) in data_extra {
                    data.insert(k, v);
                }
                for k in [
                    "creator",
                    "character_version",
                    "mes_example",
                    "system_prompt",
                    "post_history_instructions",
                    "first_mes",
                    "personality",
                    "scenario",
                    "creator_notes",
                ] {
                    data.insert(k.into(), json!(""));
                }
                data.insert("name".into(), json!(name));
                data.insert("description".into(), json!(desc));
                data.insert("tags".into(), json!([]));
                data.insert("extensions".into(), json!({"depth_prompt": {"depth": 4}}));
                data.insert("alternate_greetings".into(), json!(greetings));
                data.insert("group_only_greetings".into(), json!([]));
                if let Some(n) = nick {
                    data.insert("nickname".into(), json!(n));
                }
                if let Some(e) = entries {
                    data.insert(
                        "character_book".into(),
                        json!({"extensions": {}, "entries": e}),
                    );
                }
                let mut top = Map::new();
                for (k, v) in top_extra {
                    top.insert(k, v);
                }
                top.insert("spec".into(), json!("chara_card_v3"));
                top.insert("spec_version".into(), json!("3.0"));
                top.insert("data".into(), Value::Object(data));
                Value::Object(top)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A complete V3 card is written back byte for byte (same keys, same order, same values).
    #[test]
    fn prop_v3_json_round_trip_is_exact(input in card()) {
        let mut diags = Vec::new();
        let card = ccv3::Card::from_json(input.clone(), &mut diags).unwrap();
        prop_assert!(diags.is_empty(), "{:?}", diags);
        let out = card.to_v3_json();
        prop_assert_eq!(serde_json::to_string(&out).unwrap(), serde_json::to_string(&input).unwrap());
    }

    /// Reading what we wrote gives the same model (any input, repaired or not).
    #[test]
    fn prop_write_then_read_is_stable(input in card()) {
        let mut diags = Vec::new();
        let first = ccv3::Card::from_json(input, &mut diags).unwrap();
        let text = first.to_v3_json();
        let second = ccv3::Card::from_json(text.clone(), &mut Vec::new()).unwrap();
        prop_assert_eq!(second.to_v3_json(), text);
    }

    /// The reader never panics on arbitrary JSON.
    #[test]
    fn prop_reader_never_panics(v in any_json()) {
        let _ = ccv3::Card::from_json(v, &mut Vec::new());
    }
}
