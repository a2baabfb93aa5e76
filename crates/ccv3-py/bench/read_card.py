#!/usr/bin/env python3
"""read_card of a big card, in one process, beside tavern-card (issue 11 section 5: at least 5x
faster than tavern-card in-process). Medians of a loop; not a test.

    target/bindings/venv/bin/pip install tavern-card==0.1.1     # the peer (optional)
    python3 ../shared/peers/gen.py --out /tmp/gen                # makes card_5MB_post.png (8.6 MB)
    target/bindings/venv/bin/python crates/ccv3-py/bench/read_card.py /tmp/gen/card_5MB_post.png

Rows: reading from the path (file read + parse, what an application does) and from bytes already
in memory (parse only); ccv3 with and without parse_decorators, and the native part alone (the
card as JSON text, before json.loads) to show where the time goes.
"""

import argparse
import json
import statistics
import sys
import time

import ccv3
from ccv3 import _ccv3


def median_ms(fn, runs, warmup=2, min_s=0.5):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < runs or (time.perf_counter() - start < min_s and len(times) < 200):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), len(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=20)
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
        ("  native part: card as JSON text", lambda: _ccv3.read_card(blob, True)),
    ]
    # Floors: only building the dict from the card's JSON text (no PNG, no base64, no model).
    text = _ccv3.read_card(blob, True)
    rows += [
        ("  floor: json.loads(card JSON text)", lambda: json.loads(text)),
        ("  floor: _ccv3.loads(card JSON text)", lambda: _ccv3.loads(text)),
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
    results = {}
    for name, fn in rows:
        ms, n = median_ms(fn, a.runs)
        results[name] = ms
        print(f"{name:50s} {ms:9.2f} ms  (median of {n})")
    for kind in ("path", "bytes"):
        ours = results.get(f"ccv3.read_card({kind})")
        peer_name = "tavern_card.parse_png_card(path bytes)" if kind == "path" else "tavern_card.parse_png_card(bytes)"
        peer = results.get(peer_name)
        if ours and peer:
            print(f"speed-up over tavern-card ({kind}): {peer / ours:.1f}x")
    print(json.dumps({k: round(v, 3) for k, v in results.items()}))


if __name__ == "__main__":
    main()
