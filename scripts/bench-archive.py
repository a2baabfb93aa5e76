#!/usr/bin/env python3
"""Archive benchmark (issue 16): `ccv3 validate DIR` and `ccv3 index DIR` on a folder of 10,000 PNG
cards beside tavern-card looping over the same files in one Python process.

    scripts/bench-archive            # venv + release build + this script (the usual way)
    python3 scripts/bench-archive.py --ccv3 target/release/ccv3 --python VENV/bin/python \
        [--dir target/bench-archive/cards] [--cards 10000] [--big 20] [--rounds 3] \
        [--baseline OLD/ccv3] [--floor target/release/examples/archive_floor]

The folder is generated once (deterministic, seed 16): mostly small V3 cards (a few KB of text, a
small book), and `--big` cards of about 3 MB with lorebooks of 2,000+ entries; every card carries
the `ccv3` chunk and its V2 `chara` backfill, as V3 cards do, and a real 96x96 picture. Each round
runs ccv3 (whole process, output to /dev/null) and the tavern-card loop (time of the loop inside
one warm Python process: listing, reading, `parse_png_card`); medians are printed with the ratio.
CPU time (user + sys) is printed beside wall time: on a shared machine wall times swing with the
load, CPU times much less. `--baseline` runs a second ccv3 binary (an older build) in every round
too, for before/after numbers from one run (its `validate`, and its `index` unless --no-index). `--floor` runs the archive floor example
(crates/ccv3-cli/examples/archive_floor.rs) once per round on the same folder: the cost of each
stage of validating and indexing alone (read the `ccv3` chunk, parse, model, validate, token
counts, FTS5 fill, hash), printed as medians beside the two targets (tavern-card / 10 for
validate, 2x validate for index).
"""
import argparse
import base64
import json
import os
import random
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib

WORDS = (
    "the lighthouse keeper storm reef tide lamp island harbour boat rope salt wind night "
    "silver old young quiet brave sea gull stone path garden tea letter map song fire"
).split()


def text(rng, n_words):
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def chunk(kind, body):
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def picture_chunks():
    rng = random.Random(7)
    w = h = 96
    raw = b"".join(b"\x00" + bytes(rng.getrandbits(8) for _ in range(w * 3)) for _ in range(h))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return chunk(b"IHDR", ihdr), chunk(b"IDAT", zlib.compress(raw, 1))


def card(rng, i, entries, words):
    book = {
        "name": f"book {i}",
        "extensions": {},
        "entries": [
            {
                "keys": [rng.choice(WORDS), f"key{i}_{j}"],
                "content": text(rng, words),
                "extensions": {},
                "enabled": True,
                "insertion_order": j,
                "use_regex": False,
                "id": j,
                "comment": f"entry {j}",
            }
            for j in range(entries)
        ],
    }
    data = {
        "name": f"Card {i}",
        "description": text(rng, 420),
        "personality": text(rng, 40),
        "scenario": text(rng, 60),
        "first_mes": text(rng, 120),
        "mes_example": "<START>\n{{user}}: " + text(rng, 20) + "\n{{char}}: " + text(rng, 40),
        "creator_notes": text(rng, 30),
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [text(rng, 50)],
        "tags": [rng.choice(WORDS) for _ in range(4)],
        "creator": f"creator{i % 97}",
        "character_version": "1.0",
        "extensions": {"talkativeness": "0.5", "fav": False},
        "group_only_greetings": [],
        "character_book": book,
    }
    v3 = {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}
    v2_data = {k: v for k, v in data.items() if k != "group_only_greetings"}
    v2 = {"spec": "chara_card_v2", "spec_version": "2.0", "data": v2_data}
    return v3, v2


def generate(folder, n, big):
    os.makedirs(folder, exist_ok=True)
    ihdr, idat = picture_chunks()
    sig = b"\x89PNG\r\n\x1a\n"
    iend = chunk(b"IEND", b"")
    total_b64 = 0
    for i in range(n):
        rng = random.Random(16_000_000 + i)
        is_big = i % (n // big) == 0 if big else False
        v3, v2 = card(rng, i, 2200 if is_big else 6, 60 if is_big else 30)
        texts = []
        for key, c in ((b"chara", v2), (b"ccv3", v3)):
            b64 = base64.b64encode(json.dumps(c, separators=(",", ":")).encode())
            total_b64 += len(b64)
            texts.append(chunk(b"tEXt", key + b"\x00" + b64))
        sub = os.path.join(folder, f"{i // 1000:02d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"card{i:05d}.png"), "wb") as f:
            f.write(sig + ihdr + idat + b"".join(texts) + iend)
    with open(os.path.join(folder, ".generated"), "w") as f:
        f.write(f"{n} {big} {total_b64}\n")


LOOP = r"""
import os, sys, time
import tavern_card
folder = sys.argv[1]
t = time.perf_counter()
cpu = time.process_time()
n = bad = 0
for root, dirs, files in os.walk(folder):
    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    for name in sorted(files):
        if name.startswith(".") or not name.endswith(".png"):
            continue
        with open(os.path.join(root, name), "rb") as f:
            blob = f.read()
        try:
            c = tavern_card.parse_png_card(blob)
            n += 1
        except Exception:
            bad += 1
print(time.perf_counter() - t, n, bad, time.process_time() - cpu)
"""


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccv3", default="target/release/ccv3")
    ap.add_argument("--python", default="target/bench-archive/venv/bin/python")
    ap.add_argument("--dir", default="target/bench-archive/cards")
    ap.add_argument("--cards", type=int, default=10_000)
    ap.add_argument("--big", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-index", action="store_true")
    ap.add_argument("--baseline", help="an older ccv3 binary, validated in every round too")
    ap.add_argument("--floor", help="the archive_floor example binary, run in every round too")
    a = ap.parse_args()
    marker = os.path.join(a.dir, ".generated")
    if not os.path.exists(marker) or not open(marker).read().startswith(f"{a.cards} {a.big} "):
        if not os.path.exists(marker) and os.path.isdir(a.dir) and os.listdir(a.dir):
            sys.exit(f"{a.dir} holds files but was not made by this script (no .generated): give an empty or new folder")
        print(f"generating {a.cards} cards in {a.dir} ...", file=sys.stderr)
        generate(a.dir, a.cards, a.big)
    n, big, b64 = open(marker).read().split()
    size = sum(
        os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(a.dir) for f in fs
    )
    print(f"folder: {n} PNG cards ({big} big), {size / 1e6:.0f} MB, {int(b64) / 1e6:.0f} MB of base64 card text")
    ours, index, theirs, base, base_index = [], [], [], [], []
    floor = {}  # stage -> [(wall, cpu)], in the example's order

    def timed(cmd):
        """Runs `cmd` (output dropped): wall time, CPU time (user + sys) and exit code."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        return wall, cpu, p.returncode

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "cards.sqlite")

        def fresh_index(binary, label):
            """`binary index DIR` into a new database: wall and CPU time."""
            if os.path.exists(db):
                os.remove(db)
            w, c, code = timed([binary, "index", a.dir, "--db", db])
            if code not in (0, 1):
                sys.exit(f"{label} exited {code}")
            return w, c

        for r in range(a.rounds + 1):  # round 0 warms the page cache
            line = []
            if a.baseline:
                bw, bc, code = timed([a.baseline, "validate", a.dir, "--summary"])
                if code not in (0, 1):
                    sys.exit(f"baseline ccv3 validate exited {code}")
                line.append(f"baseline validate {bw:.3f} s ({bc:.3f} s CPU)")
            v, vc, code = timed([a.ccv3, "validate", a.dir, "--summary"])
            if code not in (0, 1):
                sys.exit(f"ccv3 validate exited {code}")
            line.append(f"ccv3 validate {v:.3f} s ({vc:.3f} s CPU)")
            if not a.no_index:
                if a.baseline:
                    bix, bixc = fresh_index(a.baseline, "baseline index")
                    line.append(f"baseline index {bix:.3f} s ({bixc:.3f} s CPU)")
                ix, ixc = fresh_index(a.ccv3, "ccv3 index")
                line.append(f"ccv3 index {ix:.3f} s ({ixc:.3f} s CPU)")
            out = subprocess.run([a.python, "-c", LOOP, a.dir], capture_output=True, text=True, check=True)
            tc, ok, bad, tcpu = out.stdout.split()
            line.append(f"tavern-card loop {float(tc):.3f} s ({float(tcpu):.3f} s CPU; {ok} read, {bad} refused)")
            if r > 0:
                ours.append((v, vc))
                theirs.append((float(tc), float(tcpu)))
                if a.baseline:
                    base.append((bw, bc))
                if not a.no_index:
                    index.append((ix, ixc))
                    if a.baseline:
                        base_index.append((bix, bixc))
            if a.floor and r > 0:
                out = subprocess.run(
                    [a.floor, a.dir, "--rounds", "1", "--json"], capture_output=True, text=True, check=True
                )
                for row in map(json.loads, out.stdout.splitlines()):
                    floor.setdefault(row["stage"], []).append((row["wall"], row["user"] + row["sys"]))
                line.append("floor (wall/CPU s) " + " ".join(f"{k} {v[-1][0]:.3f}/{v[-1][1]:.3f}" for k, v in floor.items()))
            print(f"round {r}{' (warm-up)' if r == 0 else ''}: " + ", ".join(line), flush=True)
    mo, mt = median([w for w, _ in ours]), median([w for w, _ in theirs])
    co, ct = median([c for _, c in ours]), median([c for _, c in theirs])
    print(f"median: ccv3 validate {mo:.3f} s, tavern-card {mt:.3f} s: {mt / mo:.1f}x")
    print(f"median CPU time: ccv3 validate {co:.3f} s, tavern-card {ct:.3f} s: {ct / co:.1f}x")
    if base:
        mb, cb = median([w for w, _ in base]), median([c for _, c in base])
        print(f"median: baseline validate {mb:.3f} s ({cb:.3f} s CPU): {mt / mb:.1f}x tavern-card")
    if index:
        mi, mic = median([w for w, _ in index]), median([c for _, c in index])
        print(f"median: ccv3 index (fresh database) {mi:.3f} s ({mic:.3f} s CPU): {mi / mo:.2f}x validate wall, {mic / co:.2f}x CPU")
    if base_index:
        mbi, mbic = median([w for w, _ in base_index]), median([c for _, c in base_index])
        print(f"median: baseline index {mbi:.3f} s ({mbic:.3f} s CPU)")
    if floor:
        print(f"targets: validate 10x tavern-card = {mt / 10:.3f} s wall; index 2x validate = {2 * mo:.3f} s wall")
        print("floor stages (median wall s, CPU s; see crates/ccv3-cli/examples/archive_floor.rs):")
        for stage, costs in floor.items():
            print(f"  {stage:<4} {median([w for w, _ in costs]):.3f} {median([c for _, c in costs]):.3f}")


if __name__ == "__main__":
    main()
