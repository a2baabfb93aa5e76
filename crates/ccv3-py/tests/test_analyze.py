"""lint_card, lint_lorebook, lore_graph, portability (issue 27, "The same from the library and
every interface"): the objects of ``ccv3 lint --json``, ``ccv3 lore graph --json`` and
``ccv3 portability --json``, from dicts, bytes or paths, with stable error codes."""

import json

import pytest

import ccv3

# A book made for the checks: "forge" in entry 0's content is a key of entry 1 (a recursion
# edge), "x" is a one-character key (lore-key-too-broad), {{nosuchmacro}} no dialect knows.
CARD = {
    "spec": "chara_card_v3",
    "spec_version": "3.0",
    "data": {
        "name": "Ember",
        "description": "{{char}} {{nosuchmacro}}",
        "character_book": {
            "entries": [
                {"keys": ["fire"], "content": "Ember likes the forge.", "enabled": True, "insertion_order": 0},
                {"keys": ["forge"], "content": "The forge is hot.", "enabled": True, "insertion_order": 1},
                {"keys": ["x"], "content": "X.", "enabled": True, "insertion_order": 2},
            ]
        },
    },
}


def plan(findings):
    return next(f for f in findings if f["code"] == "lore-budget-plan")["budget"]


def test_lint_card_findings_and_budget():
    found = ccv3.lint_card(CARD, tokenizer="estimate")
    codes = [f["code"] for f in found]
    assert "cbs-unknown-macro" in codes
    broad = next(f for f in found if f["code"] == "lore-key-too-broad")
    assert broad["entry"] == 2
    for f in found:
        assert f["severity"] in ("error", "warning", "info")
        assert set(f) <= {"severity", "code", "path", "entry", "message", "budget"}
    p = plan(found)
    assert p["limit"] == 8192 // 4
    assert p["total"] == p["constant"] + p["triggered_max"]
    assert len(p["entries"]) == 3


def test_options_as_the_cli_flags():
    assert plan(ccv3.lint_card(CARD, {"tokenizer": "estimate", "budget": 50}))["limit"] == 50
    assert plan(ccv3.lint_card(CARD, tokenizer="estimate", max_context=4000))["limit"] == 1000
    assert plan(ccv3.lint_card(CARD, {"maxContext": 4000}, budget_cap=100, tokenizer="estimate"))["limit"] == 100
    assert all(e["tokens"] > 0 for e in plan(ccv3.lint_card(CARD))["entries"])


def test_bytes_paths_and_dicts_agree(examples):
    raw = json.dumps(CARD).encode()
    assert ccv3.lint_card(raw, tokenizer="estimate") == ccv3.lint_card(CARD, tokenizer="estimate")
    assert ccv3.lore_graph(raw) == ccv3.lore_graph(CARD)
    assert ccv3.portability(raw) == ccv3.portability(CARD)
    png = ccv3.lint_card(examples / "ember.png", tokenizer="estimate")
    assert png == ccv3.lint_card(examples / "ember.json", tokenizer="estimate")


def test_lint_lorebook(examples):
    found = ccv3.lint_lorebook(examples / "world.json", tokenizer="estimate")
    assert any(f["code"] == "lore-budget-plan" for f in found)
    assert all(f["path"] == "" or f["path"].startswith("data") for f in found)
    book = ccv3.lint_lorebook(CARD["data"]["character_book"], tokenizer="estimate")
    assert "lore-key-too-broad" in [f["code"] for f in book]
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.lint_lorebook(examples / "ember.json")
    assert e.value.code == "read-failed"
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.lint_card(examples / "world.json")
    assert e.value.code == "read-failed"


def test_lore_graph_edges(examples):
    g = ccv3.lore_graph(CARD)
    assert [n["entry"] for n in g["nodes"]] == [0, 1, 2]
    assert g["edges"] == [{"from": 0, "to": 1, "key": "forge"}]
    assert "truncated" not in g
    assert ccv3.lore_graph(examples / "world.json")["nodes"]
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.lore_graph({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "A"}})
    assert e.value.code == "bad-input"


def test_portability_apps(examples):
    every = ccv3.portability(examples / "ember.png")
    assert all(f["app"] in ("sillytavern", "risuai", "agnai", "v2") for f in every)
    st = ccv3.portability(examples / "ember.png", apps=["st"])
    assert st == [f for f in every if f["app"] == "sillytavern"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: ccv3.lint_card(CARD, app="nope"),
        lambda: ccv3.lint_card(CARD, budget=-1),
        lambda: ccv3.lint_card(CARD, tokenizer="nope"),
        lambda: ccv3.lint_card(CARD, "sillytavern"),
        lambda: ccv3.portability(CARD, apps=["nope"]),
    ],
)
def test_bad_options_are_bad_input(call):
    with pytest.raises(ccv3.Ccv3Error) as e:
        call()
    assert e.value.code == "bad-input"


def test_unreadable_bytes():
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.portability(b"\x01\x02\x03")
    assert e.value.code == "read-failed"
