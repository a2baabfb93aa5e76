#!/usr/bin/env bash
# Runs the Python package's tests (crates/ccv3-py/tests) with pytest against the installed
# wheel, building it first with scripts/bindings/python.sh when the venv has no ccv3.
# Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/target/bindings/venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import ccv3" 2>/dev/null; then
    "$root/scripts/bindings/python.sh"
fi
# Run from outside the source tree so `import ccv3` finds the installed wheel.
cd "$root/target/bindings"
export PYTHONDONTWRITEBYTECODE=1
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/crates/ccv3-py/tests" "$@"
