#!/usr/bin/env bash
# Do several SillyTavern releases scan alike? Records the same generated scenarios with each
# release's own checkWorldInfo (npm packages, `compare.mjs --no-ccv3 --record`) and compares the
# recordings, the release's name left out (docs/sillytavern-compat.md, "Figures"). No ccv3 needed.
#
#   scripts/st-compare/versions.sh [--n 500] [--seed 1] VERSION...
#   e.g. scripts/st-compare/versions.sh --n 3000 --seed 2 1.14.0 1.16.0 1.17.0 1.18.0 1.19.0
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
n=500
seed=1
versions=()
while [ $# -gt 0 ]; do
    case "$1" in
        --n) n="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        *) versions+=("$1"); shift ;;
    esac
done
[ ${#versions[@]} -ge 2 ] || { echo "give two versions or more" >&2; exit 2; }
out="$root/target/st-compare/versions"
mkdir -p "$out"
first=""
status=0
for v in "${versions[@]}"; do
    st="$root/target/st-compare/npm-$v/package"
    if [ ! -f "$st/public/scripts/world-info.js" ]; then
        mkdir -p "$root/target/st-compare/npm-$v"
        tgz="$(cd "$root/target/st-compare" && npm pack --silent "sillytavern@$v" | tail -n 1)"
        tar -xzf "$root/target/st-compare/$tgz" -C "$root/target/st-compare/npm-$v"
    fi
    rec="$out/seed$seed-n$n-$v.json"
    node "$here/compare.mjs" --st "$st" --n "$n" --seed "$seed" --no-ccv3 --record "$rec" >/dev/null
    # The recording names the release once, first; everything after it is what the scans returned.
    sum="$(sed 's/"sillytavern":"sillytavern-[0-9.]*"//' "$rec" | sha256sum | cut -c1-16)"
    echo "$v: $n scenarios, seed $seed, results $sum"
    if [ -z "$first" ]; then
        first="$sum"
    elif [ "$sum" != "$first" ]; then
        status=1
    fi
done
if [ $status -eq 0 ]; then echo "all the same"; else echo "they differ: compare the recordings in $out"; fi
exit $status
