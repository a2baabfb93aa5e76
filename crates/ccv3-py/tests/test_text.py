"""expand_macros and count_tokens (issue 11 section 3)."""

import json

import pytest

import ccv3


def test_count_tokens():
    assert ccv3.count_tokens("hello world") == 2
    assert ccv3.count_tokens("hello world", "cl100k") == 2
    assert ccv3.count_tokens("", "estimate") == 0
    assert ccv3.count_tokens("hello world", encoding="estimate") > 0


def test_expand_macros_context(examples):
    chat = json.loads((examples / "chat.json").read_text())
    out = ccv3.expand_macros(
        "{{char}}/{{user}}/{{getvar::mood}}/{{isodate}}",
        card=examples / "ember.png", chat=chat, user="Sam", variables={"mood": "calm"}, now=0,
    )
    assert out == "Ember/Sam/calm/1970-01-01"
    assert ccv3.expand_macros("[{{time}}]") == "[]"
    assert ccv3.expand_macros("{{char}}{{getglobalvar::g}}", char="Z",
                              variables={"local": {}, "global": {"g": 1}}) == "Z1"


def test_expand_macros_errors():
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.expand_macros("x", chat=[{"role": "wizard", "content": "x"}])
    assert e.value.code == "chat"
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.expand_macros("x", now="yesterday")
    assert e.value.code == "bad-input"
