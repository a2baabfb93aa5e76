"""scan_lorebook and build_prompt (issue 11 sections 2 and 3): reports shaped as
``ccv3 lore scan --json`` / ``ccv3 prompt --json`` plus ``state``, carried across turns."""

import json

import pytest

import ccv3


@pytest.fixture
def chat(examples):
    return json.loads((examples / "chat.json").read_text())


def test_scan_with_state_across_turns(examples, chat):
    books = [examples / "ember.png", ccv3.read_lorebook(examples / "world.json")]
    out = ccv3.scan_lorebook(books, chat, user="Sam")
    assert list(out) == ["activated", "rejected", "tokens", "state"]
    assert out["activated"]
    assert all(not a["content"].startswith("@@") for a in out["activated"])
    # Same chat, same result (the seed comes from the chat).
    assert ccv3.scan_lorebook(books, chat, user="Sam") == out
    chat2 = chat + [{"role": "assistant", "content": "Soon."},
                    {"role": "user", "content": "Tell me about the lamp."}]
    nxt = ccv3.scan_lorebook(books, chat2, state=out["state"], seed=3, scan_depth=4)
    assert isinstance(nxt["state"], dict)
    # Bytes, paths and dicts are all books.
    raw = (examples / "ember.png").read_bytes()
    a = ccv3.scan_lorebook([raw], chat)
    b = ccv3.scan_lorebook([str(examples / "ember.png")], chat)
    assert a == b


def test_build_prompt(examples, chat):
    out = ccv3.build_prompt(examples / "ember.png", chat, user="Sam", max_context=4096, now=0)
    assert list(out) == ["messages", "tokens", "lore", "cut", "state"]
    assert out["messages"] and out["tokens"] > 0 and out["lore"]
    card = ccv3.read_card(examples / "ember.png")
    same = ccv3.build_prompt(card, chat, user="Sam", max_context=4096, now=0)
    assert same["messages"] == out["messages"]
    with_books = ccv3.build_prompt(card, chat, books=[examples / "world.json"], instruct="chatml")
    assert "<|im_start|>" in with_books["text"]
    # The state goes into the next turn.
    nxt = ccv3.build_prompt(card, chat, state=with_books["state"])
    assert nxt["messages"]


def test_engine_errors(examples, chat):
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.scan_lorebook([examples / "ember.png"], [{"role": "wizard", "content": "x"}])
    assert e.value.code == "chat"
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.scan_lorebook([b"nope"], chat)
    assert e.value.code == "read-failed"
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.scan_lorebook([examples / "ember.png"], chat, state="x")
    assert e.value.code == "bad-input"
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.build_prompt(examples / "ember.png", chat, greeting=99)
    assert e.value.code == "bad-input"


def test_compiled_lorebooks_scan_like_scan_lorebook(examples, chat):
    books = [examples / "ember.png", examples / "world.json"]
    compiled = ccv3.compile_lorebooks(books, user="Sam", scan_depth=3)
    assert len(compiled.book_names) == 2
    state = None
    for i in range(1, len(chat) + 1):
        one = ccv3.scan_lorebook(books, chat[:i], state=state, seed=i, user="Sam", scan_depth=3)
        assert compiled.scan(chat[:i], state=state, seed=i) == one
        assert ccv3.scan_lorebook(compiled, chat[:i], state=state, seed=i) == one
        state = one["state"]
    with pytest.raises(ccv3.Ccv3Error) as e:
        ccv3.scan_lorebook(compiled, chat, user="X")
    assert e.value.code == "bad-input"
    with pytest.raises(ccv3.Ccv3Error) as e:
        compiled.scan(5)
    assert e.value.code == "chat"
