"""The Python side of parity.test.mjs: runs a job's turns through ``ccv3.scan_lorebook``.

Usage: ``python scan.py JOB.json``, JOB being ``{"books": [path...], "turns": [[message...]...],
"options": {...}}``; prints the list of scan results (each turn passing the previous state).
"""

import json
import sys

import ccv3


def main(job_path):
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    books = []
    for path in job["books"]:
        with open(path, "rb") as f:
            books.append(f.read())
    state = None
    results = []
    for chat in job["turns"]:
        out = ccv3.scan_lorebook(books, chat, state=state, **job["options"])
        state = out["state"]
        results.append(out)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
