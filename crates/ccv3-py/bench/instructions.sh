#!/usr/bin/env bash
# Instructions a read_card call takes, beside tavern-card and the floors (instructions.py), counted
# by callgrind: each reader runs with 0 and with N calls after its warm-up, and the difference / N
# is one call (start-up cancels out), on the calling thread and on all threads.
#
#   crates/ccv3-py/bench/instructions.sh /tmp/gen/card_5MB_post.png [N] [READER...]
#
# Needs valgrind and the package (and tavern-card==0.1.1 for `tavern`) in target/bindings/venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
file="$1"
n="${2:-5}"
shift $(($# < 2 ? $# : 2))
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=(ccv3 before tavern json ccv3loads pickle marshal)
py="$root/target/bindings/venv/bin/python"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
count() { # reader calls -> "calling-thread all-threads"
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/$1.$2" \
        "$py" "$root/crates/ccv3-py/bench/instructions.py" "$1" "$file" "$2" >/dev/null 2>&1
    local main=0 all=0 f v
    for f in "$out/$1.$2"*; do
        v=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
        all=$((all + v))
        case "$f" in *-01) main=$v ;; esac
    done
    echo "$main $all"
}
printf '%-10s %16s %16s\n' reader "calling thread" "all threads"
for r in "${readers[@]}"; do
    read -r m0 a0 < <(count "$r" 0)
    read -r m1 a1 < <(count "$r" "$n")
    awk -v r="$r" -v n="$n" -v m="$((m1 - m0))" -v a="$((a1 - a0))" \
        'BEGIN { printf "%-10s %14.1f M %14.1f M\n", r, m / n / 1e6, a / n / 1e6 }'
done
