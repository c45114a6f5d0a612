"""Runs an integrador plan on Spark: each task on an executor, then the
finishing step (what `integrador gather` does on one machine) in Spark
SQL. docs/scale.md says what each step does and why.

usage:
    integrador plan -mpi a.clog2 -pcp 'pcp/*' ... -o plan.json
    spark-submit scale/spark/integrate.py plan.json RUN_DIR [--integrador PATH]
    python3 scale/spark/integrate.py plan.json RUN_DIR --master 'local[2]'

The integrador binary, the inputs (at the plan's paths), the plan and
RUN_DIR must be on storage every executor sees. Tasks write
RUN_DIR/tasks/K; the dataset is RUN_DIR/spark, one directory a table,
partitioned by task where a task's rows are its own (the task's files,
linked; Spark writes the rows that join tasks). A task that fails
is tried again by Spark (spark.task.maxFailures): a task writes its part
whole under a temporary name and puts it in place, so a second try
replaces the first. Prints one JSON line of timings at the end."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

PER_TASK = ["states", "variables", "events", "links", "checkpoints"]
ALIVE_AT_END = 9223372036854775807
MARKER = "integrador-tables.txt"


def run_task(job):
    """One task, on an executor: the plain command, its error kept."""
    integrador, plan, k, run_dir = job
    t = time.time()
    p = subprocess.run([integrador, "task", plan, str(k), "--tables", run_dir, "-q"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"integrador task {k} failed (exit {p.returncode}): {p.stderr.strip()}")
    return k, time.time() - t


def session(master):
    from pyspark.sql import SparkSession
    b = SparkSession.builder.appName("integrador")
    if master:
        b = b.master(master)
    b = (b.config("spark.driver.host", os.environ.get("SPARK_DRIVER_HOST", "127.0.0.1"))
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "4"))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def parts(spark, run_dir, n, name):
    """Every task's table `name`, each row with its task."""
    from pyspark.sql import functions as F
    paths = [os.path.join(run_dir, "tasks", str(k), f"{name}.parquet") for k in range(n)]
    df = spark.read.parquet(*paths)
    task = F.regexp_extract(F.input_file_name(), r"/tasks/([0-9]+)/[^/]+$", 1).cast("int")
    return df.withColumn("task", task)


def gather(spark, plan, run_dir, out):
    from pyspark.sql import functions as F
    n = len(plan["tasks"])
    write = lambda df, name: df.coalesce(1).write.mode("overwrite").parquet(os.path.join(out, name))
    # Two tasks setting one series: a run on one machine keeps the second
    # apart (a type of its own); the tasks cannot, and the run is refused.
    shared = (parts(spark, run_dir, n, "series").groupBy("container_id", "type_id")
              .agg(F.countDistinct("task").alias("tasks")).where("tasks > 1").limit(1).collect())
    if shared:
        raise SystemExit(f"two tasks set the same series {tuple(shared[0])[:2]}: integrate these inputs on one machine")
    inputs = parts(spark, run_dir, n, "inputs")
    end = inputs.agg(F.max("last_ns")).first()[0]
    # A task's own rows are its files as they are (linked, as `integrador
    # gather` does: no row is rewritten); the rows it had open at its end
    # are ended at the run's end, by Spark, into the task's partition.
    for name in PER_TASK:
        for k in range(n):
            at = os.path.join(out, name, f"task={k}")
            os.makedirs(at, exist_ok=True)
            src = os.path.join(run_dir, "tasks", str(k), f"{name}.parquet")
            try:
                os.link(src, os.path.join(at, "part-0.parquet"))
            except OSError:
                shutil.copyfile(src, os.path.join(at, "part-0.parquet"))
        if name in ("states", "variables"):
            at_end = parts(spark, run_dir, n, f"{name}_at_end")
            if not at_end.isEmpty():
                (at_end.withColumn("end_ns", F.lit(end).cast("long"))
                 .write.mode("append").partitionBy("task").parquet(os.path.join(out, name)))
    parts(spark, run_dir, n, "containers").createOrReplaceTempView("container_parts")
    up = [(int(k), i) for i, k in enumerate(plan["up_front"])]
    spark.createDataFrame(up, "key long, idx long").createOrReplaceTempView("up_front")
    containers = spark.sql(f"""
        WITH f AS (
            SELECT container_id, min(struct(create_ns, task, row_order)) AS first,
                   max(destroy_ns) AS d, max(pid) AS pid, max(tid) AS tid, max(rank) AS rank
            FROM container_parts GROUP BY container_id),
        one AS (
            SELECT c.container_id, c.parent_id, c.type_id, c.type, c.role, c.name, c.path,
                   c.host, c.cluster, f.pid, f.tid, f.rank, f.first.create_ns AS create_ns,
                   CASE WHEN f.d = {ALIVE_AT_END} THEN CAST({end} AS BIGINT) ELSE f.d END AS destroy_ns,
                   f.first AS first
            FROM container_parts c JOIN f
              ON c.container_id = f.container_id AND c.task = f.first.task
             AND c.row_order = f.first.row_order AND c.create_ns = f.first.create_ns)
        SELECT container_id, parent_id, type_id, type, role, name, path, host, cluster,
               pid, tid, rank, create_ns, destroy_ns,
               coalesce(u.idx, {len(up)} - 1 + row_number() OVER (
                   PARTITION BY u.idx IS NULL
                   ORDER BY first.create_ns, first.task, first.row_order, container_id)) AS row_order
        FROM one LEFT JOIN up_front u ON one.container_id = u.key""")
    write(containers, "containers")
    # One row a key: two different rows of a key are a collision, refused.
    for name, key in [("types", "type_id"), ("values", "value_id"), ("clocks", "host")]:
        df = parts(spark, run_dir, n, name).drop("task").distinct()
        if df.groupBy(key).count().where("count > 1").count():
            raise SystemExit(f"{name}: two tasks give one {key} different rows")
        write(df, name)
    aliases = parts(spark, run_dir, n, "host_aliases").groupBy("name").agg(
        F.max("container_id").alias("container_id"))
    write(aliases, "host_aliases")
    write(inputs.drop("task"), "inputs")
    runs = parts(spark, run_dir, n, "run")
    run = runs.agg(F.sum("events").alias("events"), F.sum("warnings").alias("warnings")).select(
        F.lit(2).cast("int").alias("schema_version"),
        F.lit(plan["tool_version"]).alias("tool_version"),
        F.lit(plan["t0_ns"]).cast("long").alias("t0_ns"),
        F.lit(None).cast("long").alias("from_ns"),
        F.lit(None).cast("long").alias("to_ns"),
        F.col("events").cast("long"), F.col("warnings").cast("long"))
    write(run, "run")
    with open(os.path.join(out, MARKER), "w") as f:
        f.write("an integrador dataset, gathered by Spark (scale/spark/integrate.py)\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plan")
    ap.add_argument("run_dir")
    ap.add_argument("--integrador", default=shutil.which("integrador") or "integrador")
    ap.add_argument("--master", default=None, help="e.g. local[2] (default: spark-submit's)")
    ap.add_argument("--out", default=None, help="the dataset (default RUN_DIR/spark)")
    a = ap.parse_args()
    plan_path, run_dir = os.path.abspath(a.plan), os.path.abspath(a.run_dir)
    out = os.path.abspath(a.out or os.path.join(run_dir, "spark"))
    with open(plan_path) as f:
        plan = json.load(f)
    if plan.get("format") != "integrador-plan" or not isinstance(plan.get("tasks"), list):
        raise SystemExit(f"{plan_path}: not an integrador plan")
    if os.path.exists(out) and not os.path.isfile(os.path.join(out, MARKER)):
        raise SystemExit(f"{out}: exists and is not a dataset of ours: refusing to replace it")
    os.makedirs(os.path.join(run_dir, "tasks"), exist_ok=True)
    t0 = time.time()
    spark = session(a.master)
    started = time.time()
    n = len(plan["tasks"])
    integrador = os.path.abspath(a.integrador) if os.path.sep in a.integrador else a.integrador
    jobs = [(integrador, plan_path, k, run_dir) for k in range(n)]
    done = spark.sparkContext.parallelize(jobs, max(1, n)).map(run_task).collect()
    tasks_done = time.time()
    if os.path.isfile(os.path.join(out, MARKER)):
        shutil.rmtree(out)
    gather(spark, plan, run_dir, out)
    end = time.time()
    print(json.dumps({
        "tasks": n,
        "spark_start_s": round(started - t0, 3),
        "tasks_s": round(tasks_done - started, 3),
        "task_s_sum": round(sum(d for _, d in done), 3),
        "gather_s": round(end - tasks_done, 3),
        "total_s": round(end - t0, 3),
        "dataset": out,
    }))
    spark.stop()


if __name__ == "__main__":
    main()
