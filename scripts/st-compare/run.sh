#!/usr/bin/env bash
# The SillyTavern comparison (issue 14): SillyTavern's own checkWorldInfo under Node against
# `ccv3 lore scan --json`, default mode and `--compat sillytavern`, on generated scenarios and on
# the corpus's real books. See docs/sillytavern-compat.md.
#
#   scripts/st-compare/run.sh [--st PATH | --st-npm VERSION] [--n 2000] [--seed 1] [--record FILE] [--show N]
#
# PATH is a SillyTavern checkout (or its public/scripts/world-info.js). --st-npm VERSION takes
# the `sillytavern` package of that version from the npm registry (`npm pack`, unpacked once into
# target/st-compare/npm-VERSION/). Without either, the 1.15.0 release is downloaded once from
# GitHub into target/st-compare/. Nothing of SillyTavern's is kept in the repository: the stubs of
# its imports are ours (stubs.mjs, ../st-stub-hooks.mjs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="${ST_VERSION:-1.15.0}"
st=""
npm_version=""
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --st) st="$2"; shift 2 ;;
        --st-npm) npm_version="$2"; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
if [ -z "$st" ] && [ -n "$npm_version" ]; then
    st="$root/target/st-compare/npm-$npm_version/package"
    if [ ! -f "$st/public/scripts/world-info.js" ]; then
        mkdir -p "$root/target/st-compare/npm-$npm_version"
        tgz="$(cd "$root/target/st-compare" && npm pack --silent "sillytavern@$npm_version" | tail -n 1)"
        tar -xzf "$root/target/st-compare/$tgz" -C "$root/target/st-compare/npm-$npm_version"
    fi
elif [ -z "$st" ]; then
    st="$root/target/st-compare/SillyTavern-$version"
    if [ ! -f "$st/public/scripts/world-info.js" ]; then
        mkdir -p "$root/target/st-compare"
        curl -fsSL "https://github.com/SillyTavern/SillyTavern/archive/refs/tags/$version.tar.gz" \
            | tar -xz -C "$root/target/st-compare"
    fi
fi
(cd "$root" && cargo build -q --release -p ccv3-cli)
corpus="${CCV3_CORPUS:-$root/../shared/corpus}"
real=()
if [ -d "$corpus" ]; then
    for f in "$corpus"/lorebook/*; do real+=(--real "$f"); done
    while IFS= read -r f; do real+=(--real "$corpus/$f"); done \
        < <(awk -F'\t' '$7 ~ /book_entries=[1-9]/ {print $1}' "$corpus/MANIFEST.tsv")
fi
exec node "$here/compare.mjs" --st "$st" --ccv3 "$root/target/release/ccv3" "${real[@]}" "${args[@]}"
