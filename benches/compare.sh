#!/usr/bin/env bash
# Byte-for-byte comparison of the traces two integrador binaries write for
# every shipped example and fixture: a refactoring must not change one
# byte (issue 14). Prints one line per command, "same" or "DIFFERS", and
# exits 1 if any differs.
#
#   benches/compare.sh OLD_BINARY NEW_BINARY
#
# Build the old binary from the commit before the change, e.g.
#   git worktree add /tmp/old HEAD~1 && (cd /tmp/old && cargo build --release)
#
# A trace that differs is also compared with its aliases (t<n>, c<n>,
# v<n>) renumbered in order of appearance: "same but for aliases" tells a
# renumbering from a change of content (it still counts as differing).
set -uo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2
out=$(mktemp -d)
d=tests/data
ex=examples
run=(
  "readme|-hierarchy hierarchies/mpi+os+ganglia+pcp.toml -mpi $ex/pingpong-localhost/mpi_pingpong.clog2 -mpinodes $ex/pingpong-localhost/mpi.nodes -ganglia $ex/pingpong-localhost/ganglia.traced -os $ex/pingpong-localhost/vm.os -pcp $ex/pingpong-localhost/pcp/vm"
  "grid-sync|-hierarchy hierarchies/grid.toml -sync $ex/grid/timesync -ganglia $ex/grid/domain-a.traced $ex/grid/domain-b.traced"
  "deck|-hierarchy hierarchies/deck+os+ganglia+pcp.toml -deck $ex/deck/threads/rastro-0-0.rst $ex/deck/threads/rastro-0-1.rst $ex/deck/threads/rastro-0-2.rst $ex/deck/threads/rastro-1-0.rst $ex/deck/threads/rastro-2-0.rst"
  "aky|-deck $d/rastro/akypuera-pingpong/rastro-0-0.rst $d/rastro/akypuera-pingpong/rastro-1-0.rst --deck-map akypuera"
  "deck-pingpong|-deck $d/rastro/deck-pingpong/rastro-0-0.rst $d/rastro/deck-pingpong/rastro-1-0.rst"
  "ganglia+pcp|-hierarchy hierarchies/ganglia+pcp.toml -ganglia $ex/pingpong-localhost/ganglia.traced -pcp $ex/pingpong-localhost/pcp/vm"
  "ftrace|-os $ex/pingpong-localhost/vm.trace -ganglia $ex/pingpong-localhost/ganglia.traced"
  "perf|-os $ex/pipe/vm.perf --boot-epoch 1795262171.322076"
  "trace-cmd|-os $d/sched/pingpong-pipe/trace-cmd-report.txt"
  "ftrace-pipe|-os $d/sched/pingpong-pipe/ftrace.txt"
  "os-pipe|-os $d/sched/pingpong-pipe/vm.os"
  "trace-dat|-os $d/sched/pingpong-pipe/trace.dat --os-host vm"
  "tgid|-os $d/sched/tgid-contend3/ftrace.txt --os-host vm"
  "unify|-hierarchy hierarchies/ganglia+os.toml -os $d/unify/node01.os -ganglia $d/ganglia/cluster-example.traced"
  "clog-pingpong|-mpi $d/clog2/pingpong/pingpong.clog2 -mpinodes $d/clog2/pingpong/pingpong.nodes"
  "clog-ring|-mpi $d/clog2/ring/ring.clog2 -mpinodes $d/clog2/ring/ring.nodes"
  "clog-median|-mpi $d/clog2/median/median.clog2 -mpinodes $d/clog2/median/median.nodes"
  "pcp-v2|-pcp $d/pcp/pmlogger_v2/20261121.12.34"
  "pcp-v3|-pcp $d/pcp/pmlogger_v2_as_v3/20261121.12.34"
  "pcp-xz|-pcp $d/pcp/pmlogger_v2_xz/20261121.12.34"
  "pcp-zst|-pcp $d/pcp/pmlogger_v2_zst/20261121.12.34"
  "pcp-multihost|-pcp $d/pcp/multihost/node01 $d/pcp/multihost/node02"
  "snapshots|-ganglia $d/ganglia/snapshots"
  "rrd|-ganglia $d/ganglia/rrd/node02.cluster.example.bytes_in.xml $d/ganglia/rrd/node03.cluster.example.cpu_user.xml"
  "absolute|--absolute-time -ganglia $ex/grid/domain-a.traced"
)
# Aliases renumbered in order of first appearance, per letter.
canon() {
  awk '{
    for (i = 1; i <= NF; i++) if ($i ~ /^[tvc][0-9]+$/) {
      k = substr($i, 1, 1)
      if (!($i in m)) m[$i] = k (n[k]++)
      $i = m[$i]
    }
    print
  }' "$1"
}
bad=0
for entry in "${run[@]}"; do
  name=${entry%%|*} args=${entry#*|}
  # shellcheck disable=SC2086
  "$old" -q $args -o "$out/$name.old.paje" 2>"$out/$name.old.err"; a=$?
  # shellcheck disable=SC2086
  "$new" -q $args -o "$out/$name.new.paje" 2>"$out/$name.new.err"; b=$?
  if [ $a -ne $b ]; then
    echo "$name: exit $a vs $b DIFFERS"; bad=1
  elif [ $a -ne 0 ]; then
    echo "$name: both exit $a ($(head -c 200 "$out/$name.new.err"))"
  elif cmp -s "$out/$name.old.paje" "$out/$name.new.paje"; then
    echo "$name: same ($(wc -l < "$out/$name.new.paje") lines)"
  elif cmp -s <(canon "$out/$name.old.paje") <(canon "$out/$name.new.paje"); then
    echo "$name: DIFFERS, same but for aliases"; bad=1
  else
    echo "$name: DIFFERS ($(cmp "$out/$name.old.paje" "$out/$name.new.paje" | head -1))"; bad=1
  fi
done
rm -rf "$out"
exit $bad
