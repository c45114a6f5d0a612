#!/usr/bin/env bash
# The generated grid of docs/scale.md, and the figures of a run spread
# over tasks: one machine (`--tables`, on both cores and on one), then
# plan + tasks (xargs -P 1 and -P 2; a task uses one core) + gather, then the Spark driver on local[1] and local[2]; each
# dataset compared with the one-machine tables (tests/scale_sql.py). Not
# a test: figures, on this machine.
#
#   benches/scale.sh [HOSTS] [PCP_MB] [DIR]
#
# HOSTS hosts (default 256) named host000.., each with a PCP archive of
# PCP_MB MB (default 1; made by pcpbig from the pmlogger fixture, named
# after the host) and a Ganglia recording of its 16 metrics a second for
# as long as the archive lasts; beside them one MPE log (64 ranks on
# bench hosts) and one libRastro run (8 DECK nodes). The default is
# about 1.2 GB of input, ~2 tasks a host. PYTHON (default
# /tmp/pyenv/bin/python) needs duckdb and pyspark.
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${1:-256}
mb=${2:-1}
dir=${3:-${TMPDIR:-/tmp}}/integrador-scale
py=${PYTHON:-/tmp/pyenv/bin/python}
fixtures=${INTEGRADOR_FIXTURES:-../shared/fixtures}
cargo build --release -q
for p in clog rastro pcp; do cargo build --release -q -p "integrador-$p" --examples; done
bin=$PWD/target/release/integrador
ex=$PWD/target/release/examples
rm -rf "$dir"
mkdir -p "$dir/in/pcp" "$dir/in/ganglia" "$dir/in/rst"
in=$dir/in
for ((h = 0; h < hosts; h++)); do
    host=$(printf 'host%03d' "$h")
    "$ex/pcpbig" "$fixtures/pcp/pmlogger_v2/20261121.12.34" "$in/pcp/$host" "$mb" "$host" 2> /dev/null
done
secs=$((mb * 5400))
for ((h = 0; h < hosts; h++)); do
    host=$(printf 'host%03d' "$h")
    awk -v host="$host" -v secs="$secs" -v seed="$h" 'BEGIN {
        split("cpu_user cpu_system cpu_idle cpu_wio load_one load_five load_fifteen mem_free mem_cached bytes_in bytes_out pkts_in pkts_out proc_run proc_total disk_free", m, " ");
        v = seed + 1;
        print "# collector " host;
        print "# cluster grid";
        for (t = 0; t < secs; t++)
            for (k = 1; k <= 16; k++) {
                v = (v * 1103515245 + 12345) % 2147483648;
                printf "%d.%03d %s %s %.2f\n", 1795264448 + t, (seed * 13) % 1000, m[k], host, v / 21474836.48;
            }
    }' > "$in/ganglia/$host.traced"
done
"$ex/clog2gen" 64 3000 "$in/m.clog2"
"$ex/rstgen" 8 30000 "$in/rst" > /dev/null
size=$(du -sb "$in" | cut -f1)
echo "input: $(du -sh "$in" | cut -f1) ($size bytes): $hosts hosts, $(ls "$in/pcp" | grep -c '\.0$') PCP archives, $(ls "$in/ganglia" | wc -l) Ganglia recordings, 1 MPE log, 1 libRastro run of $(ls "$in/rst" | wc -l) files"
args=(-mpi "$in/m.clog2" -deck "$in/rst/*.rst" -ganglia "$in/ganglia/*.traced" -pcp "$in/pcp/*")
t() { # label, command...: wall seconds and peak RSS
    local label=$1; shift
    /usr/bin/time -f "%e %M" -o "$dir/time" "$@" > "$dir/out" 2> "$dir/err" || { cat "$dir/err"; exit 1; }
    read -r s kb < "$dir/time"
    printf '%-34s %8.2f s  peak RSS %6.0f MiB\n' "$label" "$s" "$((kb / 1024))"
    echo "$s" > "$dir/last"
}
t "one machine (--tables)" "$bin" "${args[@]}" -q --tables "$dir/single" --checkpoint-every 3600s
one=$(cat "$dir/last")
t "one machine, --threads 1" "$bin" "${args[@]}" -q --tables "$dir/single1" --threads 1 --checkpoint-every 3600s
events=$("$py" -c "import duckdb; print(duckdb.connect().execute(\"SELECT events FROM '$dir/single/run.parquet'\").fetchone()[0])")
echo "events: $events ($(python3 -c "print(f'{$events/$one/1e6:.2f}')") M events/s on one machine)"
t "plan" "$bin" plan "${args[@]}" -q -o "$dir/plan.json"
plan=$(cat "$dir/last")
n=$("$py" -c "import json; print(len(json.load(open('$dir/plan.json'))['tasks']))")
echo "plan: $n tasks, $(du -h "$dir/plan.json" | cut -f1) of JSON"
for p in 1 2; do
    rm -rf "$dir/run$p"
    t "tasks, xargs -P $p" sh -c "seq 0 $((n - 1)) | xargs -P $p -I K '$bin' task '$dir/plan.json' K --tables '$dir/run$p' -q"
    eval "tasks$p=\$(cat \"\$dir/last\")"
    t "gather" "$bin" gather "$dir/plan.json" "$dir/run$p" -q
    eval "gather$p=\$(cat \"\$dir/last\")"
    "$py" tests/scale_sql.py "$dir/single" "$dir/run$p/dataset" > "$dir/cmp" || { cat "$dir/cmp"; exit 1; }
    echo "  the dataset equals the one-machine tables"
done
# A task a source: what starting a task costs.
t "plan, a task a source" "$bin" plan "${args[@]}" -q --task-mb 0 -o "$dir/plan0.json"
n0=$("$py" -c "import json; print(len(json.load(open('$dir/plan0.json'))['tasks']))")
rm -rf "$dir/run0"
t "$n0 tasks, xargs -P 1" sh -c "seq 0 $((n0 - 1)) | xargs -P 1 -I K '$bin' task '$dir/plan0.json' K --tables '$dir/run0' -q"
tasks0=$(cat "$dir/last")
t "gather" "$bin" gather "$dir/plan0.json" "$dir/run0" -q
"$py" tests/scale_sql.py "$dir/single" "$dir/run0/dataset" > "$dir/cmp" || { cat "$dir/cmp"; exit 1; }
echo "  the dataset equals the one-machine tables"
python3 - "$one" "$plan" "$tasks1" "$gather1" "$tasks2" "$gather2" "$n" "$tasks0" "$n0" <<'PY'
import sys
one, plan, t1, g1, t2, g2, n, t0, n0 = map(float, sys.argv[1:])
w1, w2 = plan + t1 + g1, plan + t2 + g2
print(f"plan + tasks + gather: {w1:.2f} s on 1 core, {w2:.2f} s on 2: speed-up {w1 / w2:.2f}x (tasks alone {t1 / t2:.2f}x)")
print(f"plan: {100 * plan / w1:.1f}% of the 1-core run, {100 * plan / w2:.1f}% of the 2-core run")
print(f"a task's start: {1000 * (t0 - t1) / (n0 - n):.1f} ms ({n0:.0f} tasks against {n:.0f} on one core)")
PY
for c in 1 2; do
    rm -rf "$dir/run$c/spark"
    t "spark local[$c] (tasks + SQL gather)" env PYSPARK_PYTHON="$py" "$py" scale/spark/integrate.py "$dir/plan.json" "$dir/run$c" --master "local[$c]" --integrador "$bin"
    tail -1 "$dir/out"
    "$py" tests/scale_sql.py "$dir/single" "$dir/run$c/spark" > "$dir/cmp" || { cat "$dir/cmp"; exit 1; }
    echo "  the Spark dataset equals the one-machine tables"
done
