#!/usr/bin/env bash
# Builds the Python package `ccv3`: exactly one abi3 manylinux wheel (CPython 3.9 and later) in
# target/bindings/wheels/ (older wheels removed), installed into the virtualenv
# target/bindings/venv, which is created with maturin and pytest from PyPI when missing.
# No arguments. PYTHON names the interpreter for the venv (default python3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
venv="$root/target/bindings/venv"
wheels="$root/target/bindings/wheels"
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    if ! "$py" -m venv "$venv" 2>/dev/null; then
        # Debian's python3 keeps venv in a separate package.
        rm -rf "$venv"
        if command -v apt-get >/dev/null; then
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
        fi
        "$py" -m venv "$venv"
    fi
fi
if [ ! -x "$venv/bin/maturin" ] || ! "$venv/bin/python" -c "import pytest" 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.8,<2" pytest
fi

rm -rf "$wheels"
mkdir -p "$wheels"
# A manylinux wheel (PEP 600): maturin checks that the library needs no newer glibc symbol than
# the policy allows (linked on Debian 12, it needs glibc 2.34 symbols; CCV3_MANYLINUX=off for a plain
# linux wheel) and tags it, so pip installs it on any Linux with glibc 2.34 or later.
# CCV3_MANYLINUX=zig links with zig instead (ziglang from PyPI, 400 MB installed, into the venv):
# a manylinux_2_17 (manylinux2014) wheel, for glibc 2.17 and later; measured: the same
# 3 CPU-minutes of build as the default, and the package's tests pass on it.
compat=(--compatibility "${CCV3_MANYLINUX:-manylinux_2_34}")
case "${CCV3_MANYLINUX:-}" in
    off) compat=() ;;
    zig)
        "$venv/bin/python" -m ziglang version >/dev/null 2>&1 \
            || "$venv/bin/python" -m pip install --quiet --disable-pip-version-check ziglang
        # maturin runs `python3 -m ziglang`: the venv's python3 first on PATH.
        export PATH="$venv/bin:$PATH"
        compat=(--zig --compatibility manylinux_2_17) ;;
esac
"$venv/bin/maturin" build --release --strip --locked "${compat[@]}" \
    --manifest-path crates/ccv3-py/Cargo.toml \
    --interpreter "$venv/bin/python" \
    --out "$wheels"
shopt -s nullglob
built=("$wheels"/*.whl)
if [ "${#built[@]}" -ne 1 ]; then
    echo "python.sh: expected one wheel in $wheels, found ${#built[@]}" >&2
    exit 1
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "${built[0]}"
echo "python.sh: built and installed ${built[0]#"$root/"}"
