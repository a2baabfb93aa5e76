#!/usr/bin/env bash
# SillyTavern's own macro engine against `ccv3 cbs --dialect sillytavern` (see README.md).
# Usage: scripts/st-engine-compare/run.sh [ST_VERSION]   (default 1.19.0)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="${1:-1.19.0}"
work="$root/target/st-engine-compare"
mkdir -p "$work"
if [ ! -d "$work/st-$version/package" ]; then
    mkdir -p "$work/st-$version"
    (cd "$work/st-$version" && npm pack "sillytavern@$version" >/dev/null && tar xzf "sillytavern-$version.tgz")
fi
if [ ! -d "$work/node/node_modules/chevrotain" ] || [ ! -d "$work/node/node_modules/droll" ]; then
    mkdir -p "$work/node"
    # The versions SillyTavern 1.19.0's package.json names for its parser, dice and dates.
    (cd "$work/node" && npm init -y >/dev/null &&
        npm install chevrotain@11 droll@0.2.1 moment@2.30.1 --no-audit --no-fund >/dev/null)
fi
# CCV3=path/to/ccv3 uses that binary instead of building one.
ccv3="${CCV3:-}"
if [ -z "$ccv3" ]; then
    (cd "$root" && cargo build -q -p ccv3-cli --release)
    ccv3="$root/target/release/ccv3"
fi
export CHEVROTAIN_URL="file://$work/node/node_modules/chevrotain/lib/src/api.js"
export ST_NODE_DIR="$work/node"
# Dates without an offset are local time on both sides: run both in UTC.
export TZ=UTC
node "$here/compare.mjs" "$work/st-$version/package" "$ccv3" "$here/cases.jsonl"
