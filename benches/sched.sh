#!/usr/bin/env bash
# Parse throughput and peak memory of the scheduler text reader on about
# 1 GB of ftrace text: the fixture capture's event lines repeated. Not a
# test: it prints figures.
#
#   benches/sched.sh [COPIES] [DIR]     default 1230 copies (about 1 GB)
set -euo pipefail
cd "$(dirname "$0")/.."
copies=${1:-1230}
dir=${2:-${TMPDIR:-/tmp}}
fixtures=${INTEGRADOR_FIXTURES:-tests/data}
cargo build --release -q -p integrador-sched --examples
src="$fixtures/sched/pingpong-pipe/ftrace.txt"
big="$dir/bench-ftrace.txt"
head -12 "$src" > "$big"
for _ in $(seq 1 "$copies"); do tail -n +13 "$src"; done >> "$big"
echo "$(stat -c %s "$big") bytes of ftrace text"
/usr/bin/time -f "  peak RSS %M KB, %e s" target/release/examples/schedtext "$big"
rm -f "$big"
