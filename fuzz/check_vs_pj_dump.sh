#!/usr/bin/env bash
# Takes pj_dump's decision and `integrador check`'s on every file of a
# directory (a fuzz corpus of the `check` target, say) and prints the
# files they decide apart; exits 1 if there is one. Files the checker
# decides apart on purpose are left out and counted: a NUL byte (pj_dump
# never ends or aborts), a time that is not a number (pj_dump reads an
# uninitialised double), a line over 1 MiB.
#
#   fuzz/check_vs_pj_dump.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: fuzz/check_vs_pj_dump.sh DIR}
cargo build --release -q
bin=target/release/integrador
compared=0 skipped=0 accepted=0 differ=0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    if grep -qaP '\x00' "$f"; then
        skipped=$((skipped + 1))
        continue
    fi
    ours=0
    out=$("$bin" check "$f" 2>&1) || ours=1
    if grep -q "is not a number; pj_dump reads garbage\|over 1 MiB" <<< "$out"; then
        skipped=$((skipped + 1))
        continue
    fi
    theirs=0
    # (pj_dump aborts on some inputs: its shell message is not wanted.)
    (timeout 10 pj_dump -q "$f" > /dev/null 2>&1; exit $?) 2> /dev/null || theirs=1
    compared=$((compared + 1))
    accepted=$((accepted + 1 - theirs))
    if [ "$ours" != "$theirs" ]; then
        differ=$((differ + 1))
        echo "differ: $f (pj_dump accepts: $((1 - theirs)), check accepts: $((1 - ours)))"
    fi
done
echo "$compared compared ($accepted accepted by pj_dump), $skipped left out, $differ decided apart"
[ "$differ" -eq 0 ]
