"""Decorators in list form (issue 11 section 2, parseDecorators/serializeDecorators; SPEC_V3
"Decorators")."""

import pytest

import ccv3


def test_typed_values():
    got = ccv3.parse_decorators(
        "@@depth 4\n@@role system\n@@additional_keys a, b\n@@activate\n@@probability 12.5\n"
        "@@position after_desc\n\nThe castle is old."
    )
    assert got == {
        "decorators": [
            {"type": "depth", "value": 4},
            {"type": "role", "value": "system"},
            {"type": "additional_keys", "value": ["a", "b"]},
            {"type": "activate"},
            {"type": "probability", "value": 12.5},
            {"type": "position", "value": "after_desc"},
        ],
        "content": "The castle is old.",
    }
    assert isinstance(got["decorators"][0]["value"], int)


def test_fallbacks_and_unknown():
    got = ccv3.parse_decorators("@@risu_only 4\n@@@depth 3\n@@@role user\n@@after\nBody")
    assert got["decorators"] == [
        {"type": "unknown", "name": "risu_only", "value": "4",
         "fallbacks": [{"type": "depth", "value": 3}, {"type": "role", "value": "user"}]},
        {"type": "unknown", "name": "after"},
    ]
    # A known name whose value is not of its type stays as written.
    assert ccv3.parse_decorators("@@depth deep\nB")["decorators"] == [
        {"type": "unknown", "name": "depth", "value": "deep"}]


CASES = [
    "@@depth 4\nBody",
    "@@x 1\n@@@y\n@@@depth 0\n@@exclude_keys k1, k2\n\nBody\nmore",
    "@@activate\n@@dont_activate\n@@keep\n@@ignore_on_max_context\n",
    "no decorators at all",
    "",
    "@@order -2.5\n@@priority 3\n@@is_user_icon me\n@@disable_ui_prompt system_prompt\nx",
    "@@@orphan 1\n@@depth 2\nB",
    "@@depth 1\n\n@@looks like a decorator but is the body",
]


@pytest.mark.parametrize("text", CASES)
def test_round_trip(text):
    got = ccv3.parse_decorators(text)
    again = ccv3.serialize_decorators(got["decorators"], got["content"])
    assert ccv3.parse_decorators(again) == got


def test_serialize_writes_lines():
    d = [{"type": "unknown", "name": "risu_only"}, {"type": "activate"}]
    d[0]["fallbacks"] = [{"type": "depth", "value": 3}]
    assert ccv3.serialize_decorators(d, "Body") == "@@risu_only\n@@@depth 3\n@@activate\nBody"
    # Python floats with no fraction are whole numbers for numeric decorators.
    assert ccv3.serialize_decorators([{"type": "depth", "value": 2.0}], "B") == "@@depth 2\nB"
    assert ccv3.serialize_decorators([], "B") == "B"


@pytest.mark.parametrize("bad", [
    [{"type": "depth"}],
    [{"type": "depth", "value": "4"}],
    [{"type": "depth", "value": 1.5}],
    [{"type": "activate", "value": 1}],
    [{"type": "additional_keys", "value": "a"}],
    [{"type": "unknown"}],
    [{"value": 1}],
    [3],
    "depth",
])
def test_bad_decorators(bad):
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.serialize_decorators(bad, "x")
    assert e.value.code == "bad-input"


def test_card_entries_write_back_as_lines(examples):
    card = ccv3.read_card(examples / "ember.json")
    entry = card["data"]["character_book"]["entries"][0]
    entry["decorators"] = [{"type": "depth", "value": 7}, {"type": "role", "value": "assistant"}]
    raw = ccv3.read_card(ccv3.write_card(card, "json"), parse_decorators=False)
    content = raw["data"]["character_book"]["entries"][0]["content"]
    assert content.startswith("@@depth 7\n@@role assistant\n")
