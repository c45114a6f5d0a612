#!/usr/bin/env bash
# Time and peak memory of a release build on inputs made to be large in
# one dimension (issue 12): a million distinct hosts in a `.traced`, a
# million metrics in one gmond XML snapshot, a million hosts in a sync
# file, 30,000 `[clusters]` entries, kernel switches going round 50,000
# CPUs, and /dev/zero under each text option.
# Not a test: it prints figures.
#
#   benches/hostile.sh [DIR]      default $TMPDIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${TMPDIR:-/tmp}}
cargo build --release -q
bin=$PWD/target/release/integrador

awk 'BEGIN{print "# collector n0"; for(i=0;i<1000000;i++) printf "%d.%03d load_one h%07d %d\n", 1795264448+int(i/1000), i%1000, i, i%7}' > "$dir/hosts1m.traced"
awk 'BEGIN{print "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" standalone=\"yes\"?>"; print "<GANGLIA_XML VERSION=\"3.7.2\" SOURCE=\"gmond\">"; print "<CLUSTER NAME=\"c\" LOCALTIME=\"1795264448\" OWNER=\"x\" LATLONG=\"x\" URL=\"x\">"; print "<HOST NAME=\"n1\" IP=\"127.0.0.1\" REPORTED=\"1795264439\" TN=\"8\" TMAX=\"20\" DMAX=\"0\" LOCATION=\"x\" GMOND_STARTED=\"0\">"; for(i=0;i<1000000;i++) printf "<METRIC NAME=\"m%07d\" VAL=\"%d\" TYPE=\"float\" UNITS=\"\" TN=\"8\" TMAX=\"90\" DMAX=\"0\" SLOPE=\"both\"></METRIC>\n", i, i%9; print "</HOST></CLUSTER></GANGLIA_XML>"}' > "$dir/metrics1m.xml"
awk 'BEGIN{for(i=0;i<1000000;i++){printf "%d ref 1094221332%06d h%07d 1094222792%06d\n", 2*i+1, i%1000, i, i%1000; printf "%d ref 1094221342%06d h%07d 1094222802%06d\n", 2*i+2, i%1000+5, i, i%1000+3}}' > "$dir/sync1m"
awk 'BEGIN{for(i=0;i<10000000;i++){h=i%4; printf "ref %d n%d %d\n", 1094221332000000+i*10+i%7, h, 1094222792000000+i*10+h*3+i%5}}' > "$dir/sync10m"
(cat hierarchies/ganglia.toml; echo "[clusters]"; awk 'BEGIN{for(i=0;i<30000;i++) printf "c%05d = [\"h%07d\"]\n", i, i}') > "$dir/clusters30k.toml"
head -30001 "$dir/hosts1m.traced" > "$dir/hosts30k.traced"
# Switches going round 50,000 CPUs in turn: each one's CPU is the one
# seen longest ago, the least time the converter keeps.
awk 'BEGIN{print "# tracer: nop"; for(i=0;i<400000;i++){p=i%300+1; printf " task-%d   [%03d] d..2. %d.%06d: sched_switch: prev_comm=task prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=t2 next_pid=%d next_prio=120\n", p, i%50000, 100+int(i/1000000), i%1000000, p, p+1}}' > "$dir/cpus50k.txt"

measure() { # label, args...
    local label=$1; shift
    /usr/bin/time -f "$label: %e s, peak RSS %M KiB" "$bin" -q "$@" -o "$dir/hostile.paje" 2>&1 | tail -1 || true
}
measure "1M hosts (.traced)" -ganglia "$dir/hosts1m.traced"
measure "1M metrics (gmond XML)" -ganglia "$dir/metrics1m.xml"
measure "1M sync hosts" -ganglia examples/grid/domain-a.traced -sync "$dir/sync1m"
measure "10M-line sync file, 4 hosts" -ganglia examples/grid/domain-a.traced -sync "$dir/sync10m"
measure "30k [clusters] entries" -hierarchy "$dir/clusters30k.toml" -ganglia "$dir/hosts30k.traced"
measure "kernel switches round 50k CPUs" -os "$dir/cpus50k.txt" --os-host h
for opt in -ganglia -os -mpi -deck; do
    # exit 1 is the expected answer: the figure is the time and memory.
    /usr/bin/time -f "/dev/zero under $opt: %e s, peak RSS %M KiB" "$bin" -q $opt /dev/zero -o "$dir/hostile.paje" 2>&1 | tail -1 || true
done
rm -f "$dir/hosts1m.traced" "$dir/metrics1m.xml" "$dir/sync1m" "$dir/sync10m" "$dir/clusters30k.toml" "$dir/hosts30k.traced" "$dir/cpus50k.txt"
