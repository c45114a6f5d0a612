"""The tables of consecutive windows, put together, are the whole run's.

usage: windows_sql.py WHOLE DIR... 

WHOLE is the run's tables; the DIRs are the tables of K windows that
partition its time (`--to b1`, `--from b1 --to b2`, ..., `--from bK-1`).
Checked with DuckDB:
- the fact tables (states, variables, events, links, containers) of the
  windows together equal the whole run's, EXCEPT ALL both ways empty;
- the catalogue tables (types, values) hold the same distinct rows;
- each window's checkpoint at its end holds exactly what the whole run
  has open there: states and variables that started before it and end at
  or after it, the containers alive, the links with one half before it.
"""

import sys
import duckdb

FACTS = ["states", "variables", "events", "links", "containers"]
CATALOGUE = ["types", "values"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def files(dirs, table):
    return "[" + ", ".join("'%s/%s.parquet'" % (d, table) for d in dirs) + "]"


def main():
    whole, parts = sys.argv[1], sys.argv[2:]
    con = duckdb.connect()
    for t in FACTS:
        a = "select * from read_parquet('%s/%s.parquet')" % (whole, t)
        b = "select * from read_parquet(%s)" % files(parts, t)
        for x, y, what in [(a, b, "only in the whole run"), (b, a, "only in the windows")]:
            n = con.execute("select count(*) from (%s except all %s)" % (x, y)).fetchone()[0]
            if n:
                fail("%s: %d rows %s (K=%d)" % (t, n, what, len(parts)))
        n = con.execute("select count(*) from (%s)" % a).fetchone()[0]
        print("%s: %d rows, the same in %d windows" % (t, n, len(parts)))
    for t in CATALOGUE:
        a = "select distinct * from read_parquet('%s/%s.parquet')" % (whole, t)
        b = "select distinct * from read_parquet(%s)" % files(parts, t)
        for x, y in [(a, b), (b, a)]:
            n = con.execute("select count(*) from (%s except %s)" % (x, y)).fetchone()[0]
            if n:
                fail("%s: %d distinct rows differ (K=%d)" % (t, n, len(parts)))
    w = whole
    for d in parts[:-1]:
        to = con.execute("select to_ns from read_parquet('%s/run.parquet')" % d).fetchone()[0]
        held = "read_parquet('%s/checkpoints.parquet')" % d
        checks = {
            "state": (
                "select container_id, type_id, value_id, depth, since_ns from %s where kind = 'state' and at_ns = %d" % (held, to),
                "select container_id, type_id, value_id, depth, start_ns from read_parquet('%s/states.parquet') where start_ns < %d and end_ns >= %d" % (w, to, to),
            ),
            "variable": (
                "select container_id, type_id, number, since_ns from %s where kind = 'variable' and at_ns = %d" % (held, to),
                "select container_id, type_id, value, start_ns from read_parquet('%s/variables.parquet') where start_ns < %d and end_ns >= %d" % (w, to, to),
            ),
            "container": (
                "select container_id, since_ns from %s where kind = 'container' and at_ns = %d" % (held, to),
                "select container_id, create_ns from read_parquet('%s/containers.parquet') where create_ns < %d and destroy_ns >= %d" % (w, to, to),
            ),
            "link": (
                "select key, coalesce(from_container_id, to_container_id), since_ns from %s where kind = 'link' and at_ns = %d" % (held, to),
                "select key, case when start_ns <= end_ns then from_container_id else to_container_id end, least(start_ns, end_ns) from read_parquet('%s/links.parquet') where least(start_ns, end_ns) < %d and greatest(start_ns, end_ns) >= %d" % (w, to, to),
            ),
        }
        for kind, (x, y) in checks.items():
            for p, q in [(x, y), (y, x)]:
                n = con.execute("select count(*) from (%s except all %s)" % (p, q)).fetchone()[0]
                if n:
                    fail("%s: the checkpoint at %d and the whole run's open %s rows differ by %d" % (d, to, kind, n))
    print("windows: K=%d put together are the whole run" % len(parts))


main()
