"""Cards and lorebooks: read, write, validate (issue 11 section 3, the Python package)."""

import json
import os
import pathlib
import threading

import pytest

import ccv3


def test_version_is_a_string():
    assert isinstance(ccv3.__version__, str) and ccv3.__version__.count(".") == 2


@pytest.mark.parametrize("name", ["ember.json", "ember.png", "ember.charx"])
def test_read_card_from_bytes_and_paths(examples, name):
    path = examples / name
    by_path = ccv3.read_card(path)
    assert by_path == ccv3.read_card(str(path))
    assert by_path == ccv3.read_card(path.read_bytes())
    assert by_path == ccv3.read_card(bytearray(path.read_bytes()))
    assert by_path["spec"] == "chara_card_v3"
    assert by_path["data"]["name"] == "Ember Vale"


def test_parse_decorators_option(examples):
    parsed = ccv3.read_card(examples / "ember.json")
    raw = ccv3.read_card(examples / "ember.json", parse_decorators=False)
    p_entries = parsed["data"]["character_book"]["entries"]
    r_entries = raw["data"]["character_book"]["entries"]
    assert any(e["decorators"] for e in p_entries)
    for p, r in zip(p_entries, r_entries):
        assert "decorators" not in r
        expected = ccv3.parse_decorators(r["content"])
        assert p["decorators"] == expected["decorators"]
        assert p["content"] == expected["content"]


@pytest.mark.parametrize("fmt", ["png", "charx", "json"])
def test_write_then_read_round_trips(examples, fmt):
    card = ccv3.read_card(examples / "ember.json")
    data = ccv3.write_card(card, format=fmt)
    assert isinstance(data, bytes)
    back = ccv3.read_card(data)
    assert back["data"]["character_book"] == card["data"]["character_book"]
    assert back["data"]["description"] == card["data"]["description"]


def test_png_carries_ccv3_and_chara(examples):
    card = ccv3.read_card(examples / "ember.json")
    png = ccv3.write_card(card)  # png is the default
    assert png.startswith(b"\x89PNG")
    assert b"tEXtccv3\x00" in png and b"tEXtchara\x00" in png
    # An image given by path is used as the picture.
    with_image = ccv3.write_card(card, "png", image=examples / "ember.png")
    assert ccv3.read_card(with_image)["data"]["name"] == "Ember Vale"


def test_v1_card_dict_is_upgraded_on_write():
    back = ccv3.read_card(ccv3.write_card({"name": "Aqua", "description": "a goddess"}, "json"))
    assert back["spec"] == "chara_card_v3"
    assert back["data"]["name"] == "Aqua"


def test_lorebooks(examples):
    book = ccv3.read_lorebook(examples / "world.json")
    assert book["entries"]
    for fmt in [None, "lorebook_v3", "worldinfo"]:
        back = ccv3.read_lorebook(ccv3.write_lorebook(book, format=fmt))
        assert len(back["entries"]) == len(book["entries"])
    assert ccv3.read_lorebook(ccv3.write_lorebook(book))["entries"] == book["entries"]
    # A card file gives its character book.
    assert ccv3.read_lorebook(examples / "ember.png")["entries"]


def test_validate(examples):
    card = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "A",
            "assets": [{"type": "icon", "uri": "https://e.com/a.png", "name": "main", "ext": ".PNG"}]}}
    found = ccv3.validate_card(card)
    assert any(d["path"] == "data.assets[0].ext" for d in found)
    for d in found:
        assert list(d) == ["severity", "code", "path", "message"]
        assert d["severity"] in ("error", "warning", "info")
    assert ccv3.validate_card(json.dumps(card).encode()) == found
    assert isinstance(ccv3.validate_card(examples / "ember.charx"), list)
    assert isinstance(ccv3.validate_lorebook(examples / "world.json"), list)
    assert isinstance(ccv3.validate_lorebook(ccv3.read_lorebook(examples / "world.json")), list)


def test_errors_are_ccv3_errors_with_codes(examples, tmp_path):
    def code(f, *a, **k):
        with pytest.raises(ccv3.Ccv3Error) as e:
            f(*a, **k)
        assert isinstance(e.value, ValueError)
        assert str(e.value)
        return e.value.code

    assert code(ccv3.read_card, b"garbage") == "read-failed"
    assert code(ccv3.read_card, b"") == "read-failed"
    assert code(ccv3.read_card, examples / "world.json") == "read-failed"
    assert code(ccv3.read_card, tmp_path / "missing.png") == "read-failed"
    assert code(ccv3.read_card, 12) == "bad-input"
    assert code(ccv3.read_lorebook, b"{}") == "read-failed"
    card = ccv3.read_card(examples / "ember.json")
    assert code(ccv3.write_card, card, "gif") == "bad-input"
    assert code(ccv3.write_card, card, "png", image=b"not a png") == "bad-input"
    assert code(ccv3.write_card, [1, 2], "json") == "bad-input"
    assert code(ccv3.write_card, {"x": float("nan")}, "json") == "bad-input"
    assert code(ccv3.write_card, {"x": object()}, "json") == "bad-input"
    card["data"]["character_book"]["entries"][0]["decorators"] = [{"type": "depth"}]
    assert code(ccv3.write_card, card, "json") == "bad-input"
    assert code(ccv3.write_lorebook, {"entries": []}, "nai") == "bad-input"
    assert code(ccv3.validate_card, examples / "world.json") == "read-failed"
    assert code(ccv3.count_tokens, "x", "gpt2") == "bad-input"
    assert code(ccv3.serialize_decorators, [{"type": "nonsense"}], "x") == "bad-input"


def test_read_cards_in_parallel(examples, tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    paths = [examples / "ember.png", str(examples / "ember.charx"), bad,
             tmp_path / "missing.json", examples / "ember.json"] * 3
    out = list(ccv3.read_cards(iter(paths), threads=2))
    assert [p for p, _ in out] == paths
    for p, r in out:
        if p in (bad, tmp_path / "missing.json"):
            assert isinstance(r, ccv3.Ccv3Error) and r.code == "read-failed"
        else:
            assert r["data"]["name"] == "Ember Vale"
    assert list(ccv3.read_cards([])) == []
    with pytest.raises(ccv3.Ccv3Error):
        list(ccv3.read_cards(paths, threads=0))


def test_other_threads_run_while_rust_works(examples):
    # The interpreter is released: reading in threads gives the same results.
    data = (examples / "ember.charx").read_bytes()
    results = []
    threads = [threading.Thread(target=lambda: results.append(ccv3.read_card(data))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(r == results[0] for r in results)


def test_corpus_reads_and_round_trips(corpus):
    cards = 0
    for line in (corpus / "MANIFEST.tsv").read_text().splitlines()[1:]:
        cols = line.split("\t")
        path, kind = corpus / cols[0], cols[1]
        if kind == "lorebook":
            book = ccv3.read_lorebook(path)
            assert ccv3.read_lorebook(ccv3.write_lorebook(book))["entries"] == book["entries"]
            continue
        try:
            card = ccv3.read_card(path)
        except ccv3.Ccv3Error as e:
            assert "invalid" in line, (path, e)
            continue
        cards += 1
        back = ccv3.read_card(ccv3.write_card(card, "json"))
        assert back["data"].get("character_book") == card["data"].get("character_book"), path
    assert cards > 10


def _shape(v):
    """A value's types and key order, all the way down."""
    if isinstance(v, dict):
        return ("dict", [(k, _shape(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_shape(x) for x in v])
    return type(v).__name__


def test_cards_are_built_as_json_loads_builds_the_json_text(examples, corpus):
    # Issue 11 section 5: read_card builds its dicts straight from Rust, and they are exactly
    # what json.loads made of the card's JSON text before: values, types and key order.
    from ccv3 import _ccv3

    files = [examples / n for n in ("ember.png", "ember.charx", "ember.json", "world.json")]
    files += sorted(p for p in corpus.rglob("*") if p.is_file() and p.stat().st_size < 4_000_000)
    compared = 0
    for f in files:
        data = f.read_bytes()
        for decorators in (True, False):
            for native, public in ((_ccv3.read_card, ccv3.read_card),
                                   (_ccv3.read_lorebook, ccv3.read_lorebook)):
                try:
                    want = json.loads(native(data, decorators))
                except ccv3.Ccv3Error:
                    continue
                for got in (public(data, decorators), public(f, decorators)):
                    assert got == want, f
                    assert _shape(got) == _shape(want), f
                compared += 1
    assert compared > 10


def test_read_cards_builds_what_read_card_builds(examples, corpus):
    # Issue 29: read_cards' reading threads write each card's whole tape and the calling thread
    # only makes the objects; the dicts are still json.loads of the card's JSON text (values,
    # types, key order) and the errors read_card's. CCV3_GEN names a folder of the peers'
    # generated cards (python3 ../shared/peers/gen.py --out DIR) to compare those too.
    from ccv3 import _ccv3

    files = [examples / n for n in ("ember.png", "ember.charx", "ember.json", "world.json")]
    files += sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix != ".tsv")
    gen = os.environ.get("CCV3_GEN")
    if gen:
        files += sorted(p for p in pathlib.Path(gen).glob("card*") if p.stat().st_size < 20_000_000)
    for decorators in (True, False):
        for threads in (1, 2):
            got = list(ccv3.read_cards(files, threads=threads, parse_decorators=decorators))
            assert [p for p, _ in got] == files
            for f, card in got:
                try:
                    want = json.loads(_ccv3.read_card_path(str(f), decorators))
                except ccv3.Ccv3Error as e:
                    assert isinstance(card, ccv3.Ccv3Error) and card.code == e.code, f
                    continue
                assert card == want, f
                assert _shape(card) == _shape(want), f
                if threads == 1:
                    direct = ccv3.read_card(f, decorators)
                    assert direct == want and _shape(direct) == _shape(want), f


def test_reading_leaves_the_garbage_collector_as_it_was(examples):
    # The collector is paused while a card's dicts are built (issue 11 section 5), then restored.
    import gc

    assert gc.isenabled()
    ccv3.read_card(examples / "ember.png")
    assert gc.isenabled()
    gc.disable()
    try:
        ccv3.read_card(examples / "ember.png")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_read_cards_can_be_left_early(examples):
    # Leaving the generator drops its batch: the reading threads stop, nothing waits.
    paths = [examples / "ember.png"] * 200
    for i, (path, card) in enumerate(ccv3.read_cards(paths, threads=2)):
        assert card["data"]["name"] == "Ember Vale"
        if i == 3:
            break
    assert len(list(ccv3.read_cards(paths[:5], threads=1))) == 5


def test_big_books_are_built_alike_on_two_threads(tmp_path):
    # Issue 11 section 5: a book of 256 entries or more is walked on a second thread while the
    # dicts are built; the result is still json.loads of the card's JSON text.
    from ccv3 import _ccv3

    entries = [{"keys": [f"k{i}", "é"], "content": f"@@depth {i % 7}\n@@@role system\nEntry {i}.",
                "enabled": i % 3 != 0, "insertion_order": i, "id": i, "priority": 1.5 * i,
                "extensions": {"depth": i, "nested": {"a": [1, None, True, "x"]}, "big": 2**63},
                "x_unknown": {"deep": [[i]]}} for i in range(600)]
    card = {"spec": "chara_card_v3", "spec_version": "3.0",
            "data": {"name": "Many", "character_book": {"name": "B", "entries": entries}}}
    path = tmp_path / "many.png"
    path.write_bytes(ccv3.write_card(card, "png"))
    data = path.read_bytes()
    for decorators in (True, False):
        want = json.loads(_ccv3.read_card(data, decorators))
        for got in (ccv3.read_card(data, decorators), ccv3.read_card(path, decorators)):
            assert got == want
            assert _shape(got) == _shape(want)
        [(_, got)] = list(ccv3.read_cards([path], parse_decorators=decorators))
        assert got == want and _shape(got) == _shape(want)
    assert want["data"]["character_book"]["entries"][5]["extensions"]["big"] == 2**63


@pytest.mark.parametrize("name", ["ember.json", "ember.png", "ember.charx"])
def test_read_card_summary_agrees_with_read_card(examples, name):
    # Issue 29 ("Library list"): what a character list shows, the values read_card gives.
    path = examples / name
    summary = ccv3.read_card_summary(path)
    assert summary == ccv3.read_card_summary(str(path))
    assert summary == ccv3.read_card_summary(path.read_bytes())
    data = ccv3.read_card(path)["data"]
    assert list(summary) == [
        "name", "nickname", "creator", "tags", "spec", "spec_version", "container",
        "greetings", "entries", "assets",
    ]
    assert summary["name"] == data["name"]
    assert summary["nickname"] == data.get("nickname")
    assert summary["creator"] == data["creator"]
    assert summary["tags"] == data["tags"]
    assert summary["spec"] == "V3"
    assert summary["container"] == {"ember.json": "JSON", "ember.png": "PNG", "ember.charx": "CHARX"}[name]
    assert summary["greetings"] == (1 if data["first_mes"] else 0) + len(data["alternate_greetings"])
    assert summary["entries"] == len(data["character_book"]["entries"])
    assert summary["assets"] == len(data.get("assets") or [])


@pytest.mark.parametrize("name", ["ember.json", "ember.png", "ember.charx"])
def test_read_card_summary_counts_the_permanent_tokens_when_asked(examples, name):
    # Issue 29: "the token count of the permanent fields if asked": SillyTavern 1.19.0's
    # permanent counters (public/index.html data-token-permanent): name, description,
    # personality, scenario and the character's note, each counted and added.
    path = examples / name
    assert "permanent_tokens" not in ccv3.read_card_summary(path)
    data = ccv3.read_card(path)["data"]
    note = data["extensions"]["depth_prompt"]["prompt"]
    for enc in ["o200k", "cl100k", "estimate"]:
        expected = sum(
            ccv3.count_tokens(t, enc) if t else 0
            for t in [data["name"], data["description"], data["personality"], data["scenario"], note]
        )
        summary = ccv3.read_card_summary(path, tokens=enc)
        assert list(summary)[-1] == "permanent_tokens"
        assert summary["permanent_tokens"] == expected
        assert ccv3.read_card_summary(path.read_bytes(), tokens=enc) == summary
    with pytest.raises(ccv3.Ccv3Error):
        ccv3.read_card_summary(path, tokens="nope")


def test_read_card_summary_of_a_lorebook_is_an_error(examples):
    with pytest.raises(ccv3.Ccv3Error) as err:
        ccv3.read_card_summary(examples / "world.json")
    assert "lorebook" in str(err.value)


def _png_with_card_text(text):
    """A 1x1 PNG whose `ccv3` chunk is `text` as it is (base64 of its UTF-8), no `chara` chunk."""
    import base64
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    card = b"ccv3\x00" + base64.b64encode(text.encode())
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"tEXt", card)
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


def _as_is_card_text(entries, extensions):
    """The JSON text of a V3 card the model keeps as it is, with these entries (JSON texts) and
    `data.extensions` (a JSON text), written by hand: spacing, escapes and numbers as given."""
    data = ('"name":"Ember \\u00e9\\ud83d\\ude00","description":"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t",'
            '"tags":[],"creator":"","character_version":"","mes_example":"","extensions":'
            + extensions + ',"system_prompt":"","post_history_instructions":"","first_mes":"Hi",'
            '"alternate_greetings":["é ∑ 😀"],"personality":"","scenario":"","creator_notes":"",'
            '"group_only_greetings":[],"character_book":{"extensions":{},"entries":['
            + ",".join(entries) + "]}")
    return '{ "spec" : "chara_card_v3", "spec_version":"3.0",\n "data": {' + data + "}}"


def test_cards_that_stand_as_they_are_are_built_from_their_text(tmp_path):
    # Issue 29: a PNG card whose text the model keeps as it is (ccv3_embed::read_card_as_is) is
    # built straight from that text; the objects must still be exactly json.loads of the card
    # the model writes (read_card_path): values, types (int or float as serde_json reads the
    # number: -0 and integers past 64 bits are floats), key order, a key twice inside
    # extensions, escapes and surrogate pairs, and `decorators: []` after each entry's fields.
    from ccv3 import _ccv3

    numbers = ('{"ints":[0,1,-1,18446744073709551615,-9223372036854775808,9223372036854775807],'
               '"floats":[-0,-0.0,0.5,1e2,1E-7,-2.5e+3,18446744073709551616,-9223372036854775809,'
               '123456789012345678901234567890,0.1,2.2250738585072014e-308,1.7976931348623157e308],'
               '"twice":1,"nested":{"a":[[[],{}],{"b":null,"c":true,"d":false}]},"twice":[2],'
               '"esc\\u0041key":"\\u0000\\u001f","":""}')
    entry = ('{"keys":["k{i}","é"],"content":"Entry {i} with a \\"quote\\".","extensions":{ext},'
             '"enabled":true,"insertion_order":{i},"use_regex":false,"priority":{p},"id":{id},'
             '"comment":"c","x-extra":[1,2.5,"s"]}')
    entries = [entry.replace("{i}", str(i)).replace("{ext}", numbers if i % 2 else "{}")
               .replace("{p}", "1.5" if i % 3 else "-0").replace("{id}", '"s"' if i % 4 else str(i))
               for i in range(300)]
    for i, (ents, ext) in enumerate([(entries, numbers), (entries[:3], "{}"), ([], numbers)]):
        path = tmp_path / f"as_is_{i}.png"
        png = _png_with_card_text(_as_is_card_text(ents, ext))
        path.write_bytes(png)
        for decorators in (True, False):
            want = json.loads(_ccv3.read_card_path(str(path), decorators))
            got = [ccv3.read_card(path, decorators), ccv3.read_card(png, decorators)]
            got += [c for _, c in ccv3.read_cards([path, path], threads=2, parse_decorators=decorators)]
            for card in got:
                assert card == want and repr(card) == repr(want), (i, decorators)
                assert _shape(card) == _shape(want), (i, decorators)
            if ents and decorators:
                assert all(e["decorators"] == [] for e in want["data"]["character_book"]["entries"])
