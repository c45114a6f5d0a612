#!/usr/bin/env bash
# Decode throughput and peak memory on a large PCP archive, side by side
# with libpcp's `pmdumplog -a` on the same archive (when PCP is
# installed), and the whole run. Not a test: it prints figures.
#
#   benches/pcp.sh [MEGABYTES] [DIR]     default 110 MB
#
# The archive is made by sources/pcp/examples/pcpbig.rs from the real
# pmlogger archive of the fixtures: its .meta, and its 64 records repeated
# with shifted times (so counters wrap where the passes join, as after a
# logger restart), in one v2 volume.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-110}
dir=${2:-${TMPDIR:-/tmp}}
fixtures=${INTEGRADOR_FIXTURES:-tests/data}
cargo build --release -q
cargo build --release -q -p integrador-pcp --examples
bin=target/release/integrador
ex=target/release/examples
base="$dir/bench-pcp/big"
rm -rf "$dir/bench-pcp"
mkdir -p "$dir/bench-pcp"
"$ex/pcpbig" "$fixtures/pcp/pmlogger_v2/20261121.12.34" "$base" "$mb"
size=$(stat -c %s "$base.0")

t() { # $1 = label, then the command; prints wall time and peak RSS
    local label=$1
    shift
    /usr/bin/time -f "  $label: %e s, peak RSS %M KB" "$@"
}
echo "archive: $size bytes"
t "decode (pcpdump --count)" "$ex/pcpdump" --count "$base"
t "decode and print every value (pcpdump)" "$ex/pcpdump" "$base" > /dev/null
if command -v pmdumplog > /dev/null; then
    t "libpcp: pmdumplog -a" pmdumplog -a "$base" > /dev/null
else
    echo "  pmdumplog not installed (apt-get install pcp): no side-by-side figure"
fi
t "integrate (integrador -pcp)" "$bin" -pcp "$base" -o "$dir/bench-pcp/out.paje"
rm -rf "$dir/bench-pcp"
