"""Compares a gathered dataset (integrador gather, or the Spark driver)
with the tables of the same inputs integrated on one machine, in DuckDB:
every table's rows, EXCEPT ALL both ways, on the single run's columns.
The checkpoints are not compared: they are an index of where to start
reading (docs/windows.md), and a task takes its own, at the hours its own
events cross, where the one-machine run takes them where the merged
events cross. `run.warnings` is left out: it counts what
each task's summary warned of, and a few warnings are about the whole run
(a sync file that corrects none of a task's hosts, inputs hours apart).

usage: scale_sql.py SINGLE_TABLES_DIR DATASET_DIR
Prints one line per table; exits 1 on the first difference."""
import sys
import duckdb

TABLES = ["states", "variables", "events", "links", "containers", "types",
          "values", "run", "inputs", "clocks", "host_aliases"]


def main(single, dataset):
    con = duckdb.connect()
    bad = 0
    for t in TABLES:
        a = f"read_parquet('{single}/{t}.parquet')"
        b = f"read_parquet('{dataset}/{t}/**/*.parquet', hive_partitioning=false)"
        cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {a}").fetchall()]
        if t == "run":
            cols.remove("warnings")
        sel = ", ".join(f'"{c}"' for c in cols)
        op = "EXCEPT ALL"
        n = con.execute(f"SELECT count(*) FROM {a}").fetchone()[0]
        m = con.execute(f"SELECT count(*) FROM {b}").fetchone()[0]
        only_a = con.execute(f"SELECT {sel} FROM {a} {op} SELECT {sel} FROM {b}").fetchall()
        only_b = con.execute(f"SELECT {sel} FROM {b} {op} SELECT {sel} FROM {a}").fetchall()
        ok = not only_a and not only_b
        print(f"{t}: {n} rows one machine, {m} gathered: {'equal' if ok else 'DIFFERENT'}")
        if not ok:
            bad += 1
            print("  only in the one-machine tables:", cols)
            for r in only_a[:5]:
                print("   ", r)
            print("  only in the dataset:")
            for r in only_b[:5]:
                print("   ", r)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
