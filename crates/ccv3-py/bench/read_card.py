#!/usr/bin/env python3
"""read_card of a big card, in one process, beside tavern-card (issue 11 section 5: at least 5x
faster than tavern-card in-process). Medians of a loop; not a test.

    target/bindings/venv/bin/pip install tavern-card==0.1.1     # the peer (optional)
    python3 ../shared/peers/gen.py --out /tmp/gen                # makes card_5MB_post.png (8.6 MB)
    target/bindings/venv/bin/python crates/ccv3-py/bench/read_card.py /tmp/gen/card_5MB_post.png

Rows: reading from the path (file read + parse, what an application does) and from bytes already
in memory (parse only); ccv3 with and without parse_decorators; the way ccv3 read cards before
(the card as JSON text, then parsed into dicts) and that text's native part alone; and floors:
building the same dicts from the card's JSON text, and CPython building them from its own binary
forms (pickle, marshal), the least any reader that returns plain dicts pays. Rows run in turns
(one call of each per round), so that load on the machine hits them alike; medians and minimums.
"""

import argparse
import json
import marshal
import pickle
import statistics
import sys
import time

import ccv3
from ccv3 import _ccv3


def measure(rows, runs, warmup=2):
    """Median and minimum milliseconds of each row, the rows called in turns."""
    for _, fn in rows:
        for _ in range(warmup):
            fn()
    times = {name: [] for name, _ in rows}
    for _ in range(runs):
        for name, fn in rows:
            t = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t) * 1000)
    return {name: (statistics.median(v), min(v)) for name, v in times.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=30)
    a = ap.parse_args()
    with open(a.file, "rb") as f:
        blob = f.read()

    def from_path(parse):
        with open(a.file, "rb") as f:
            return parse(f.read())

    rows = [
        ("ccv3.read_card(path)", lambda: ccv3.read_card(a.file)),
        ("ccv3.read_card(bytes)", lambda: ccv3.read_card(blob)),
        ("ccv3.read_card(bytes, parse_decorators=False)",
         lambda: ccv3.read_card(blob, parse_decorators=False)),
        ("  before: JSON text, then _ccv3.loads (path)",
         lambda: _ccv3.loads(_ccv3.read_card_path(a.file, True))),
        ("  native part of before: card as JSON text", lambda: _ccv3.read_card(blob, True)),
    ]
    # Floors: only building the dicts (no PNG, no base64, no model), from the card's JSON text
    # and from CPython's own binary forms of the same value.
    text = _ccv3.read_card(blob, True)
    card = json.loads(text)
    pickled = pickle.dumps(card, protocol=pickle.HIGHEST_PROTOCOL)
    marshalled = marshal.dumps(card)
    rows += [
        ("  floor: json.loads(card JSON text)", lambda: json.loads(text)),
        ("  floor: _ccv3.loads(card JSON text)", lambda: _ccv3.loads(text)),
        ("  floor: pickle.loads(card)", lambda: pickle.loads(pickled)),
        ("  floor: marshal.loads(card)", lambda: marshal.loads(marshalled)),
    ]
    try:
        import tavern_card

        rows += [
            ("tavern_card.parse_png_card(path bytes)", lambda: from_path(tavern_card.parse_png_card)),
            ("tavern_card.parse_png_card(bytes)", lambda: tavern_card.parse_png_card(blob)),
        ]
    except ImportError:
        print("tavern-card is not installed: ccv3 rows only", file=sys.stderr)

    card = ccv3.read_card(blob)
    book = (card["data"].get("character_book") or {}).get("entries") or []
    print(f"{a.file}: {len(blob) / 1e6:.1f} MB, {len(book)} lorebook entries, ccv3 {ccv3.__version__}")
    measured = measure(rows, a.runs)
    results = {}
    for name, _ in rows:
        ms, least = measured[name]
        results[name] = ms
        print(f"{name:50s} {ms:9.2f} ms median, {least:9.2f} ms min ({a.runs} runs)")
    for kind in ("path", "bytes"):
        ours = results.get(f"ccv3.read_card({kind})")
        peer_name = "tavern_card.parse_png_card(path bytes)" if kind == "path" else "tavern_card.parse_png_card(bytes)"
        peer = results.get(peer_name)
        if ours and peer:
            print(f"speed-up over tavern-card ({kind}): {peer / ours:.1f}x median, "
                  f"{measured[peer_name][1] / measured[f'ccv3.read_card({kind})'][1]:.1f}x min")
    print(json.dumps({k: round(v, 3) for k, v in results.items()}))


if __name__ == "__main__":
    main()
