"""Spark's side of icerun-bench -upsert-peers (cmd/icerun-bench/upsertpeers.go).

Run with $ICERUN_PYTHON from `eval "$(scripts/engines)"`, beside peer.py
(its spark_session), with ICERUN_SPARK_JARS holding the Iceberg runtime
and Spark's Kafka source:

    python upsert_stream.py '<json request>'

op "drain": Spark Structured Streaming reads the request's Kafka topic from
its earliest offsets (JSON changes of the orders table, keyed by order_id),
trigger processingTime 1 second, at most max_offsets messages a batch, and
foreachBatch keeps the latest version of each order_id in the batch and
MERGEs it into the table (merge-on-read): a delete row deletes the order, a
newer version updates it, a new order is inserted. Spark keeps its offsets
in its checkpoint. The drain ends when a batch's end offsets reach the
request's end offsets (the backlog's, per partition).

op "scan": a full scan of the table (every row and column, deletes
applied, to the noop sink; after an untimed one that warms the JVM), then
rewrite_data_files (every data file, its
deletes applied), then the same scan of the compacted table.

It prints one JSON line: startup (JVM start and session, s), and for drain
the drain's wall and cpu seconds (from the query's start to the last
batch's end), its batches and the messages they read; for scan the
seconds of the warm-up scan, the scan, the compaction and the compacted
scan.
"""
import ast
import json
import os
import sys
import time

from peer import CATALOG, Clock, proc_cpu, spark_session

TABLE = "shop.orders_current"  # upsertIdent

# The change spec of icerun's -upsert order_id -order version
# -delete-when status=deleted, as a MERGE of the batch's latest versions.
MERGE = (
    "MERGE INTO {table} t USING {source} s ON t.order_id = s.order_id "
    "WHEN MATCHED AND s.status = 'deleted' THEN DELETE "
    "WHEN MATCHED AND s.version > t.version THEN UPDATE SET * "
    "WHEN NOT MATCHED AND s.status <> 'deleted' THEN INSERT *"
)

# The messages' JSON, as icerun-bench produces it; updated_at is RFC 3339
# text, cast to a timestamp.
VALUE_SCHEMA = "order_id BIGINT, version BIGINT, status STRING, amount BIGINT, updated_at STRING"


def reached(end_offset, topic, want):
    """Whether a progress's endOffset (a dict, its JSON text or its repr) holds, for
    every partition of want ({"0": n, ...}: the offset after the last
    message), an offset of at least want's."""
    if end_offset is None:
        return False
    if isinstance(end_offset, str):
        try:
            end_offset = json.loads(end_offset)
        except ValueError:  # pyspark 4 gives the dict's repr
            end_offset = ast.literal_eval(end_offset)
    got = end_offset.get(topic, {})
    return all(int(got.get(p, -1)) >= n for p, n in want.items())


def progress_dict(p):
    """A StreamingQueryProgress (or the dict of older pysparks) as a dict."""
    if p is None:
        return None
    if isinstance(p, dict):
        return p
    return json.loads(p.json)


def drain(spark, req, full, clock):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    for k in ("write.merge.mode", "write.update.mode", "write.delete.mode"):
        spark.sql("ALTER TABLE %s SET TBLPROPERTIES ('%s'='merge-on-read')" % (full, k))
    state = {"batches": 0, "rows": 0}

    def merge(batch, batch_id):
        latest = (
            batch.withColumn("_n", F.row_number().over(Window.partitionBy("order_id").orderBy(F.col("version").desc())))
            .where("_n = 1")
            .drop("_n")
        )
        view = "changes_%d" % batch_id
        latest.createOrReplaceTempView(view)
        # A global temp view would outlive the batch; this one lives in the
        # batch's session, where the MERGE runs.
        latest.sparkSession.sql(MERGE.format(table=full, source=view))
        state["batches"] += 1

    src = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", req["brokers"])
        .option("subscribe", req["topic"])
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(req["max_offsets"]))
        .option("failOnDataLoss", "true")
        .load()
    )
    changes = (
        src.select(F.from_json(F.col("value").cast("string"), VALUE_SCHEMA).alias("c"))
        .select("c.*")
        .withColumn("updated_at", F.col("updated_at").cast("timestamp"))
    )
    want = {str(p): n for p, n in req["end_offsets"].items()}
    t1, c1 = time.perf_counter(), clock.cpu()
    q = (
        changes.writeStream.foreachBatch(merge)
        .trigger(processingTime="1 second")
        .option("checkpointLocation", req["checkpoint"])
        .start()
    )
    deadline = time.monotonic() + req.get("timeout_secs", 3600)
    seen = set()
    while True:
        if q.exception() is not None:
            raise RuntimeError("the streaming query failed: %s" % q.exception())
        if not q.isActive:
            raise RuntimeError("the streaming query stopped")
        # Every progress since the last look: the batch that reaches the
        # end offsets is the drain's last.
        for p in q.recentProgress:
            d = progress_dict(p)
            if d.get("batchId") in seen or d.get("numInputRows", 0) == 0:
                continue
            seen.add(d.get("batchId"))
            state["rows"] += d.get("numInputRows", 0)
            if reached(d["sources"][0].get("endOffset"), req["topic"], want):
                out = {"drain": time.perf_counter() - t1, "cpu": clock.cpu() - c1,
                       "batches": state["batches"], "rows": state["rows"]}
                q.stop()
                return out
        if time.monotonic() > deadline:
            q.stop()
            raise RuntimeError("the backlog not drained in %s s: %d batches" % (req.get("timeout_secs", 3600), state["batches"]))
        time.sleep(0.2)


def scan(spark, full):
    out = {}
    # The session's first scan loads and compiles what every scan needs:
    # a warm-up, untimed, so that the two timed scans compare the tables.
    t = time.perf_counter()
    spark.table(full).write.format("noop").mode("overwrite").save()
    out["warmup_scan"] = time.perf_counter() - t
    t = time.perf_counter()
    spark.table(full).write.format("noop").mode("overwrite").save()
    out["scan"] = time.perf_counter() - t
    t = time.perf_counter()
    spark.sql(
        "CALL %s.system.rewrite_data_files(table => '%s', "
        "options => map('rewrite-all', 'true', 'remove-dangling-deletes', 'true'))" % (CATALOG, TABLE)
    ).collect()
    out["compact"] = time.perf_counter() - t
    t = time.perf_counter()
    spark.table(full).write.format("noop").mode("overwrite").save()
    out["compacted_scan"] = time.perf_counter() - t
    return out


def main():
    req = json.loads(sys.argv[1])
    t0, c0 = time.perf_counter(), time.process_time()
    spark = spark_session(req)
    jvm = spark._jvm.java.lang.ProcessHandle.current().pid()
    out = {"startup": time.perf_counter() - t0, "startup_cpu": time.process_time() - c0 + proc_cpu(jvm)}
    full = "%s.%s" % (CATALOG, TABLE)
    if req["op"] == "drain":
        out.update(drain(spark, req, full, Clock(jvm)))
    elif req["op"] == "scan":
        out.update(scan(spark, full))
    else:
        raise ValueError("unknown op %r" % req["op"])
    spark.stop()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
