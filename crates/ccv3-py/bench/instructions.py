#!/usr/bin/env python3
"""One reader of the card, called 1 + N times, for counting instructions under callgrind
(instructions.sh runs it): load on a shared machine moves wall times, not instruction counts.

    python instructions.py READER FILE N

READER: ccv3 (read_card(path)), before (the card's JSON text, then _ccv3.loads: how read_card
worked before issue 11 section 5), tavern (tavern-card from the path), or a floor that only
builds the same dicts: json (json.loads of the card's JSON text), ccv3loads (_ccv3.loads of
it), pickle, marshal (CPython's own binary forms).
"""

import json
import marshal
import pickle
import sys

import ccv3
from ccv3 import _ccv3

reader, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
card = ccv3.read_card(path)
text = json.dumps(card, ensure_ascii=False, separators=(",", ":"))
pickled = pickle.dumps(card, protocol=pickle.HIGHEST_PROTOCOL)
marshalled = marshal.dumps(card)


def tavern():
    import tavern_card

    with open(path, "rb") as f:
        return tavern_card.parse_png_card(f.read())


readers = {
    "ccv3": lambda: ccv3.read_card(path),
    "before": lambda: _ccv3.loads(_ccv3.read_card_path(path, True)),
    "tavern": tavern,
    "json": lambda: json.loads(text),
    "ccv3loads": lambda: _ccv3.loads(text),
    "pickle": lambda: pickle.loads(pickled),
    "marshal": lambda: marshal.loads(marshalled),
}
fn = readers[reader]
fn()  # warm-up
for _ in range(n):
    fn()
