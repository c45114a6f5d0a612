#!/usr/bin/env python3
"""Runs docs/sql's questions on a tables directory in DuckDB (and Spark
with --spark) and checks every answer against the same answer computed
here, independently, from pj_dump's dump of the same run's Pajé trace.

    tables_sql.py TABLES PJ_DUMP_OUTPUT SQL_DIR [--spark] [--spark-dataset DIR]

pyarrow checks every file first: its schema, its provenance metadata and
its row count against the count of pj_dump's lines of its kind. Prints
one line a check; exits 1 on the first disagreement. Called by
tests/tables_sql.rs.
"""
import collections
import math
import os
import re
import sys

TABLES = ["states", "variables", "events", "links", "containers", "types",
          "values", "run", "inputs", "clocks", "host_aliases"]
# pj_dump prints times with 6 decimals: each time it gives is within half
# a microsecond of the tables' nanoseconds.
US = 1e-6


def fail(msg):
    print(f"tables_sql: FAIL: {msg}")
    sys.exit(1)


def close(a, b, tol):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol


# --- pj_dump's dump, read independently --------------------------------

class Dump:
    def __init__(self, path):
        self.lines = collections.defaultdict(list)
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.rstrip("\n").split(",")]
                self.lines[cells[0]].append(cells)
        # name -> (parent, type); names are unique in these runs (pj_dump
        # names collide across hosts, which is why the tables join by id).
        self.containers = {c[6]: (c[1], c[2]) for c in self.lines["Container"]}

    def chain(self, name):
        out = []
        while name in self.containers and name != "0":
            out.append(name)
            name = self.containers[name][0]
        return out

    def path(self, name):
        return "/".join(reversed(self.chain(name)))

    def host(self, name):
        for n in self.chain(name):
            if self.containers[n][1] == "Machine":
                return n
        return None

    def states(self):
        # State, container, type, start, end, duration, imbrication, value
        for c in self.lines["State"]:
            yield c[1], c[2], float(c[3]), float(c[4]), int(float(c[6])), c[7]

    def variables(self):
        for c in self.lines["Variable"]:
            yield c[1], c[2], float(c[3]), float(c[4]), float(c[6])

    def links(self):
        # Link, container, type, start, end, duration, value, from, to, key
        for c in self.lines["Link"]:
            yield c[7], c[8], float(c[3]), float(c[4])


def overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def expect_q1(d, load_above, load_type):
    recv = [(n, s, e) for n, _t, s, e, _i, v in d.states() if v == "MPI_Recv"]
    loaded = collections.defaultdict(list)
    for n, t, s, e, v in d.variables():
        if t == load_type and v > load_above and d.containers[n][1] == "Machine":
            loaded[n].append((s, e))
    out = collections.defaultdict(float)
    hit = set()
    for n, s, e in recv:
        for ls, le in loaded[d.host(n)]:
            if ls < e and s < le:
                out[d.path(n)] += overlap(s, e, ls, le)
                hit.add(d.path(n))
    return {k: v for k, v in out.items() if k in hit}, len(recv)


def expect_q2(d, band_s):
    return sorted((d.path(f), d.path(t), s, e) for f, t, s, e in d.links() if e + band_s < s)


def expect_q4(d):
    by = collections.defaultdict(list)
    for f, t, s, e in d.links():
        by[(d.host(f), d.host(t))].append(e - s)
    return {k: (len(v), percentile(v, 0.5), percentile(v, 0.9)) for k, v in by.items()}


def percentile(xs, q):
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def expect_q5(d, at_s):
    out = []
    for n, t, s, e, i, v in d.states():
        if d.containers.get(n, ("", ""))[1] == "Process" and s <= at_s < e:
            out.append((d.path(n), t, i, v))
    return sorted(out)


def expect_q6(d):
    by_c = collections.defaultdict(list)
    for row in d.states():
        by_c[row[0]].append(row)
    out = collections.defaultdict(float)
    for n, rows in by_c.items():
        waits = [(s, e) for _n, _t, s, e, _i, v in rows if v == "MPI_Recv"]
        kern = [(s, e, v) for _n, t, s, e, _i, v in rows if t == "OS state"]
        for ws, we in waits:
            for ks, ke, kv in kern:
                if ks < we and ws < ke:
                    out[(d.path(n), kv)] += overlap(ws, we, ks, ke)
    return out


def expect_q3(d, ganglia_type, pcp_type):
    sums = collections.defaultdict(lambda: [0.0, 0.0])
    for n, t, s, e, v in d.variables():
        if t in (ganglia_type, pcp_type):
            w = sums[(n, t)]
            w[0] += v * (e - s)
            w[1] += e - s
    out = {}
    for (n, t), (num, den) in sums.items():
        if t == ganglia_type and (n, pcp_type) in sums:
            p = sums[(n, pcp_type)]
            out[n] = (num / den, p[0] / p[1] * 100)
    return out


# --- the engines -------------------------------------------------------

def statements(text):
    return [s.strip() for s in text.split(";") if s.strip()]


def question(sql_dir, name, replace=()):
    with open(os.path.join(sql_dir, name)) as f:
        text = f.read()
    for a, b in replace:
        assert a in text, (name, a)
        text = text.replace(a, b)
    return text


class DuckDB:
    def __init__(self, tables, sql_dir):
        import duckdb
        self.con = duckdb.connect()
        for t in TABLES:
            p = os.path.join(tables, f"{t}.parquet").replace("'", "''")
            self.con.execute(f"CREATE TEMPORARY VIEW {t} AS SELECT * FROM read_parquet('{p}')")
        with open(os.path.join(sql_dir, "views.sql")) as f:
            for s in statements(f.read()):
                self.con.execute(s)

    def rows(self, sql):
        return [tuple(r) for r in self.con.execute(sql).fetchall()]


class Spark:
    def __init__(self, tables, sql_dir):
        from pyspark.sql import SparkSession
        self.spark = (SparkSession.builder.master("local[2]")
                      .config("spark.driver.host", "127.0.0.1")
                      .config("spark.ui.enabled", "false")
                      .config("spark.sql.shuffle.partitions", "2")
                      .getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        for t in TABLES:
            # A run's tables (NAME.parquet) or a gathered dataset (NAME/).
            path = os.path.join(tables, f"{t}.parquet")
            if not os.path.exists(path):
                path = os.path.join(tables, t)
            self.spark.read.parquet(path).createOrReplaceTempView(t)
        with open(os.path.join(sql_dir, "views.sql")) as f:
            for s in statements(f.read()):
                self.spark.sql(s)

    def rows(self, sql):
        return [tuple(r) for r in self.spark.sql(sql).collect()]


def check_files(tables, dump):
    import pyarrow.parquet as pq
    kinds = {"states": "State", "variables": "Variable", "events": "Event", "links": "Link"}
    for t in TABLES:
        path = os.path.join(tables, f"{t}.parquet")
        meta = pq.read_metadata(path)
        kv = {k.decode(): v.decode() for k, v in (meta.metadata or {}).items()}
        if kv.get("integrador.schema_version") != "2":
            fail(f"{t}: schema_version metadata {kv}")
        schema = pq.read_schema(path)
        for field in schema:
            ty = str(field.type)
            if ty.startswith("uint") or ty.startswith("timestamp"):
                fail(f"{t}.{field.name}: {ty}")
            if field.name.endswith("_ns") and ty != "int64":
                fail(f"{t}.{field.name}: {ty}, not int64")
        if t in kinds and meta.num_rows != len(dump.lines[kinds[t]]):
            fail(f"{t}: {meta.num_rows} rows, pj_dump {len(dump.lines[kinds[t]])}")
        if t == "containers" and meta.num_rows + 1 != len(dump.lines["Container"]):
            fail(f"containers: {meta.num_rows} rows, pj_dump {len(dump.lines['Container'])} with the root")
    print(f"pyarrow: {len(TABLES)} files: schemas, metadata, counts equal pj_dump's")


def answers(engine, sql_dir):
    q = lambda name, rep=(): engine.rows(question(sql_dir, name, rep))
    return {
        # The example's host is hardly loaded: its five-minute load, above
        # 0.9 part of the time, makes the question answer something.
        "q1": q("q1_recv_under_load.sql", [("2.0 AS load_above", "0.9 AS load_above"),
                                          ("'load_one' AS load_type", "'load_five' AS load_type")]),
        "q2": q("q2_messages_back_in_time.sql"),
        "q3": q("q3_ganglia_vs_pcp_cpu.sql"),
        "q4": q("q4_latency_by_host_pair.sql"),
        "q5": q("q5_ranks_at_instant.sql"),
        "q6": q("q6_kernel_states_during_mpi_wait.sql"),
        "pj_states": engine.rows("SELECT path, type, start_s, end_s, imbrication, value FROM pj_states"),
    }


def compare_with_dump(a, d, t0):
    got = {r[0]: r[1] for r in a["q1"]}
    want, n_recv = expect_q1(d, 0.9, "load_five")
    if n_recv == 0 or not want:
        fail("q1: the example has no MPI_Recv under load: the check would be empty")
    if got.keys() != want.keys() or any(not close(got[k], want[k], 2 * US * n_recv) for k in want):
        fail(f"q1: {got} != {want}")
    print(f"q1: MPI_Recv under load per rank equals pj_dump's: {got}")

    want = expect_q2(d, 1000e-9)
    got = sorted((r[0], r[1], (r[2] - t0) / 1e9, (r[3] - t0) / 1e9) for r in a["q2"])
    if len(got) != len(want):
        fail(f"q2: {len(got)} messages back in time, pj_dump {len(want)}")
    print(f"q2: {len(got)} message(s) back in time, as in pj_dump")

    want = expect_q3(d, "cpu_user", "kernel.all.cpu.user (utilisation)")
    got = {r[0]: (r[1], r[2]) for r in a["q3"]}
    if not want or got.keys() != want.keys():
        fail(f"q3: hosts {sorted(got)} != {sorted(want)}")
    for k in want:
        if not all(close(x, y, 1e-3 * max(1, abs(y))) for x, y in zip(got[k], want[k])):
            fail(f"q3: {k}: {got[k]} != {want[k]}")
    print(f"q3: Ganglia and PCP user CPU per host equal pj_dump's: {got}")

    want = expect_q4(d)
    got = {(r[0], r[1]): (r[2], r[3] / 1e9, r[4] / 1e9) for r in a["q4"]}
    if not want or got.keys() != want.keys():
        fail(f"q4: pairs {sorted(got)} != {sorted(want)}")
    for k in want:
        if got[k][0] != want[k][0] or not all(close(x, y, 2 * US) for x, y in zip(got[k][1:], want[k][1:])):
            fail(f"q4: {k}: {got[k]} != {want[k]}")
    print(f"q4: latency percentiles per host pair equal pj_dump's: {got}")

    # pj_dump gives seconds from T0, as the question asks.
    want = expect_q5(d, 14.0)
    got = sorted((r[0], r[1], r[2], r[3]) for r in a["q5"])
    if not want or got != want:
        fail(f"q5: {got} != {want}")
    print(f"q5: {len(got)} open states at T0+14 s, as in pj_dump")

    want = expect_q6(d)
    got = {(r[0], r[1]): r[2] for r in a["q6"]}
    if not want or got.keys() != want.keys():
        fail(f"q6: {sorted(got)} != {sorted(want)}")
    for k in want:
        if not close(got[k], want[k], 2 * US * len(d.lines["State"])):
            fail(f"q6: {k}: {got[k]} != {want[k]}")
    print(f"q6: kernel states during MPI_Recv equal pj_dump's: {got}")

    got = sorted((p, t, round(s, 6), round(e, 6), i, v) for p, t, s, e, i, v in a["pj_states"])
    want = sorted((d.path(n), t, round(s, 6), round(e, 6), i, v) for n, t, s, e, i, v in d.states())
    if len(got) != len(want) or any(
            g[:2] != w[:2] or g[4:] != w[4:] or not close(g[2], w[2], US) or not close(g[3], w[3], US)
            for g, w in zip(got, want)):
        fail("views.sql: pj_states differs from pj_dump's State lines")
    print(f"views.sql: pj_states equals pj_dump's {len(want)} State lines")


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return close(float(a), float(b), 1e-9 * max(1.0, abs(float(a))))
    return a == b


def main():
    if len(sys.argv) < 4:
        fail(__doc__)
    tables, dump_path, sql_dir = sys.argv[1:4]
    d = Dump(dump_path)
    check_files(tables, d)
    duck = answers(DuckDB(tables, sql_dir), sql_dir)
    t0 = DuckDB(tables, sql_dir).rows("SELECT t0_ns FROM run")[0][0]
    compare_with_dump(duck, d, t0)
    print("duckdb: the six questions and the view agree with pj_dump")
    if "--spark" in sys.argv:
        spark = answers(Spark(tables, sql_dir), sql_dir)
        agree(duck, spark, "spark")
        print("spark: the six questions and the view give DuckDB's answers")
    if "--spark-dataset" in sys.argv:
        # The same run spread over tasks and gathered by Spark
        # (scale/spark/integrate.py): Spark's answers on that dataset.
        dataset = sys.argv[sys.argv.index("--spark-dataset") + 1]
        spark = answers(Spark(dataset, sql_dir), sql_dir)
        agree(duck, spark, "spark on the gathered dataset")
        print("spark on the gathered dataset: the six questions and the view give DuckDB's answers on the one-machine tables")


def agree(duck, other, who):
    for k in duck:
        x, y = sorted(duck[k], key=repr), sorted(other[k], key=repr)
        if len(x) != len(y) or any(len(r) != len(s) or not all(same(a, b) for a, b in zip(r, s))
                                   for r, s in zip(x, y)):
            fail(f"{who}: {k}: {y[:3]} != duckdb {x[:3]}")


if __name__ == "__main__":
    main()
