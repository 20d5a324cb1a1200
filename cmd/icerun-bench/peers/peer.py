"""One measured run of a peer engine for icerun-bench (cmd/icerun-bench).

Run with $ICERUN_PYTHON from `eval "$(scripts/engines)"`:

    python peer.py '<json request>'

The request names the engine (pyiceberg, spark-cow, spark-mor, pyarrow),
the scenario (replace, dynamic, upsert, backfill, floor; compact and scan
read no input: Spark's rewrite_data_files, a full scan), the warehouse
folder (catalog.db inside, as icerun's embedded catalog), the input Parquet
file and the output file (floor). The table was prepared by icerun-bench;
nothing here is timed but the job: from the first read of the input to the
end of the commit. Spark's JVM start and session creation are timed apart.

It prints one JSON line: wall and cpu seconds of the job (the cpu of this
process plus the JVM's, read from /proc), startup and startup_cpu (Spark),
and for backfill the seconds of the first and last 10 commits.
"""
import json
import os
import sys
import time

CATALOG = "icerun"  # internal.CatalogName: Java's catalog name must equal it
TABLE = "bench.fact_orders"


def proc_cpu(pid):
    """user+system CPU seconds of process pid (0 when it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


class Clock:
    def __init__(self, jvm_pid=None):
        self.jvm = jvm_pid

    def cpu(self):
        c = time.process_time()
        if self.jvm:
            c += proc_cpu(self.jvm)
        return c


def spark_session(req):
    from pyspark.sql import SparkSession

    d = req["dir"]
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("icerun-bench")
        .config("spark.jars", os.environ["ICERUN_SPARK_JARS"])
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", os.environ.get("ICERUN_SPARK_MEMORY", "2g"))
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        .config("spark.sql.iceberg.check-nullability", "false")
        .config("spark.sql.catalog." + CATALOG, "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.%s.catalog-impl" % CATALOG, "org.apache.iceberg.jdbc.JdbcCatalog")
        .config("spark.sql.catalog.%s.uri" % CATALOG, "jdbc:sqlite:" + os.path.join(d, "catalog.db"))
        .config("spark.sql.catalog.%s.jdbc.schema-version" % CATALOG, "V1")
        .config("spark.sql.catalog.%s.warehouse" % CATALOG, "file://" + d)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_spark(req):
    t0, c0 = time.perf_counter(), time.process_time()
    spark = spark_session(req)
    jvm = spark._jvm.java.lang.ProcessHandle.current().pid()
    startup, startup_cpu = time.perf_counter() - t0, time.process_time() - c0 + proc_cpu(jvm)
    full = "%s.%s" % (CATALOG, TABLE)
    sc = req["scenario"]
    if sc == "upsert":
        mode = "merge-on-read" if req["engine"] == "spark-mor" else "copy-on-write"
        spark.sql("ALTER TABLE %s SET TBLPROPERTIES ('write.merge.mode'='%s', 'write.update.mode'='%s', 'write.delete.mode'='%s')" % (full, mode, mode, mode))
    clock = Clock(jvm)
    out = {"startup": startup, "startup_cpu": startup_cpu}
    t1, c1 = time.perf_counter(), clock.cpu()
    if sc in ("compact", "scan"):
        if sc == "compact":
            # Every data file rewritten with its deletes applied, and the
            # delete files left dangling removed, as icerun's Compact does.
            spark.sql(
                "CALL %s.system.rewrite_data_files(table => '%s', "
                "options => map('rewrite-all', 'true', 'remove-dangling-deletes', 'true'))" % (CATALOG, TABLE)
            ).collect()
        else:
            # Every row and column read with the deletes applied.
            spark.table(full).write.format("noop").mode("overwrite").save()
        out["wall"], out["cpu"] = time.perf_counter() - t1, clock.cpu() - c1
        spark.stop()
        return out
    df = spark.read.parquet(req["input"])
    if sc in ("replace", "dynamic"):
        df.createOrReplaceTempView("input")
        spark.sql("INSERT OVERWRITE %s SELECT * FROM input" % full)
    elif sc == "upsert":
        df.createOrReplaceTempView("input")
        spark.sql(
            "MERGE INTO %s t USING input s ON t.order_id = s.order_id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *" % full
        )
    elif sc == "backfill":
        df.createOrReplaceTempView("input")
        days = [r[0] for r in spark.sql("SELECT DISTINCT event_date FROM input ORDER BY 1").collect()]
        laps = []
        for d in days:
            l0 = time.perf_counter()
            spark.sql("INSERT OVERWRITE %s SELECT * FROM input WHERE event_date = DATE'%s'" % (full, d.isoformat()))
            laps.append(time.perf_counter() - l0)
        out["first10"], out["last10"] = sum(laps[:10]), sum(laps[-10:])
    else:
        raise ValueError("spark: unknown scenario %r" % sc)
    out["wall"], out["cpu"] = time.perf_counter() - t1, clock.cpu() - c1
    spark.stop()
    return out


def run_pyiceberg(req):
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import EqualTo

    d = req["dir"]
    cat = SqlCatalog(CATALOG, uri="sqlite:///" + os.path.join(d, "catalog.db"), warehouse="file://" + d)
    tbl = cat.load_table(TABLE)
    clock = Clock()
    out = {}
    t1, c1 = time.perf_counter(), clock.cpu()
    data = pq.read_table(req["input"])
    sc = req["scenario"]
    if sc == "replace":
        day = data.column("event_date")[0].as_py()
        tbl.overwrite(data, overwrite_filter=EqualTo("event_date", day.isoformat()))
    elif sc == "dynamic":
        tbl.dynamic_partition_overwrite(data)
    elif sc == "upsert":
        tbl.upsert(data, join_cols=["order_id"])
    elif sc == "backfill":
        import pyarrow.compute as pc

        laps = []
        for day in pc.unique(data.column("event_date")).to_pylist():
            l0 = time.perf_counter()
            part = data.filter(pc.equal(data.column("event_date"), day))
            tbl.overwrite(part, overwrite_filter=EqualTo("event_date", day.isoformat()))
            laps.append(time.perf_counter() - l0)
        out["first10"], out["last10"] = sum(laps[:10]), sum(laps[-10:])
    else:
        raise ValueError("pyiceberg: unknown scenario %r" % sc)
    out["wall"], out["cpu"] = time.perf_counter() - t1, clock.cpu() - c1
    return out


def run_pyarrow(req):
    """The floor: the input's rows to one zstd Parquet file, no Iceberg."""
    import pyarrow.parquet as pq

    clock = Clock()
    t1, c1 = time.perf_counter(), clock.cpu()
    pq.write_table(pq.read_table(req["input"]), req["output"], compression="zstd")
    return {"wall": time.perf_counter() - t1, "cpu": clock.cpu() - c1}


def main():
    req = json.loads(sys.argv[1])
    eng = req["engine"]
    if eng.startswith("spark"):
        out = run_spark(req)
    elif eng == "pyiceberg":
        out = run_pyiceberg(req)
    elif eng == "pyarrow":
        out = run_pyarrow(req)
    else:
        raise ValueError("unknown engine %r" % eng)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
