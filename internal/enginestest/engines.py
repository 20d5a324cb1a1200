"""The reference engines of icerun's test suites, driven by Go over JSON lines
(internal/enginestest is the client; the interop and integration suites use it).

One process per `go test` run: ONE Spark session (Java Iceberg through the
iceberg-spark-runtime jar) and PyIceberg. Requests arrive on stdin, one JSON
object a line; each gets one JSON line on the original stdout. Everything
else (the JVM's and Python's logs) goes to stderr.

Requests:
  {"op":"ping"}
  {"op":"configure_catalog","name":N,"spark":{k:v},"pyiceberg":{k:v}}
      registers Spark catalog N (spark.sql.catalog.N.k = v, at runtime) and
      a PyIceberg catalog named N with the given properties: a RestCatalog
      when its "type" is "rest", else a SqlCatalog.
  {"op":"spark_sql","sql":S}                 -> {"columns":[...],"rows":[[...]]}
  {"op":"pyiceberg_scan","catalog":N,"table":"ns.t","filter":F|null,
   (F: a PyIceberg expression string, or its JSON form: see expr)
   "snapshot_id":id|null,"columns":[...]|null} -> {"columns","rows"}
  {"op":"pyiceberg_inspect","catalog":N,"table":"ns.t",
   "what":"snapshots|manifests|files|partitions|entries"} -> {"columns","rows"}
  {"op":"batch","requests":[...]}            -> {"results":[...]}
Every answer is {"ok":true,...} or {"ok":false,"error":"..."}; in a batch,
each result is one of those.

Values are typed strings, lossless: "null" for null, "b:true", "i:42",
"f:<16 hex digits of the float64 bits>" (NaN as "f:NaN"), "d:<decimal as
written, scale kept>", "s:<text>", "x:<base64>", "date:<days since epoch>",
"time:<micros>", "ts:<micros since epoch, UTC>" (a uuid is "s:<canonical>",
as Spark reads it); a
struct is a JSON object of such values, a list a JSON array, a map a JSON
array of [key, value] pairs. interop/value.go encodes icerun's input the same
way.
"""

import base64
import datetime
import decimal
import json
import math
import os
import struct
import sys
import time
import traceback
import uuid

# Answers go to the original stdout; fd 1 becomes stderr, so that the JVM
# (a child that inherits fd 1) and any print() cannot corrupt the protocol.
_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

os.environ["TZ"] = "UTC"
time.tzset()

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def enc(v):
    """Encodes one value as the typed string (or JSON structure) above."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "b:true" if v else "b:false"
    if isinstance(v, int):
        return "i:%d" % v
    if isinstance(v, float):
        if math.isnan(v):
            return "f:NaN"
        return "f:" + struct.pack(">d", v).hex()
    if isinstance(v, decimal.Decimal):
        return "d:" + str(v)
    if isinstance(v, str):
        return "s:" + v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "x:" + base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        d = v - _EPOCH
        return "ts:%d" % ((d.days * 86400 + d.seconds) * 1000000 + d.microseconds)
    if isinstance(v, datetime.date):
        return "date:%d" % (v - _EPOCH_DATE).days
    if isinstance(v, datetime.time):
        return "time:%d" % (((v.hour * 60 + v.minute) * 60 + v.second) * 1000000 + v.microsecond)
    if isinstance(v, uuid.UUID):
        return "s:" + str(v)  # as Spark shows a uuid column
    if isinstance(v, dict):
        return {str(k): enc(x) for k, x in v.items()}
    if hasattr(v, "asDict"):  # a Spark Row (struct; a tuple, so first)
        return {k: enc(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, (list, tuple)):
        return [enc(x) for x in v]
    raise TypeError("cannot encode %r (%s)" % (v, type(v).__name__))


class Engines:
    def __init__(self):
        self.spark = None
        self.catalogs = {}

    def session(self):
        if self.spark is None:
            from pyspark.sql import SparkSession

            self.spark = (
                SparkSession.builder.master("local[2]")
                .appName("icerun-interop")
                .config("spark.jars", os.environ["ICERUN_SPARK_JARS"])
                .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.default.parallelism", "2")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.driver.memory", os.environ.get("ICERUN_SPARK_MEMORY", "1g"))
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
                .getOrCreate()
            )
            self.spark.sparkContext.setLogLevel("ERROR")
        return self.spark

    def op_ping(self, req):
        return {}

    def op_configure_catalog(self, req):
        name = req["name"]
        spark = self.session()
        spark.conf.set("spark.sql.catalog." + name, "org.apache.iceberg.spark.SparkCatalog")
        for k, v in (req.get("spark") or {}).items():
            spark.conf.set("spark.sql.catalog.%s.%s" % (name, k), v)
        props = req.get("pyiceberg")
        if props is not None and props.get("type") == "rest":
            from pyiceberg.catalog.rest import RestCatalog

            props = {k: v for k, v in props.items() if k != "type"}
            self.catalogs[name] = RestCatalog(name, **props)
        elif props is not None:
            from pyiceberg.catalog.sql import SqlCatalog

            self.catalogs[name] = SqlCatalog(name, **props)
        return {}

    def op_spark_sql(self, req):
        df = self.session().sql(req["sql"])
        cols = df.columns
        rows = [[enc(r[i]) for i in range(len(cols))] for r in df.collect()]
        return {"columns": cols, "rows": rows}

    def table(self, req):
        return self.catalogs[req["catalog"]].load_table(req["table"])

    def op_pyiceberg_scan(self, req):
        from pyiceberg.expressions import AlwaysTrue

        tbl = self.table(req)
        f = req.get("filter")
        kw = {"row_filter": AlwaysTrue() if not f else (f if isinstance(f, str) else expr(f))}
        if req.get("snapshot_id") is not None:
            kw["snapshot_id"] = int(req["snapshot_id"])
        if req.get("columns"):
            kw["selected_fields"] = tuple(req["columns"])
        return arrow_rows(tbl.scan(**kw).to_arrow())

    def op_pyiceberg_inspect(self, req):
        tbl = self.table(req)
        what = req["what"]
        if what not in ("snapshots", "manifests", "files", "partitions", "entries", "history", "refs", "all_manifests"):
            raise ValueError("unknown inspect table %r" % what)
        return arrow_rows(getattr(tbl.inspect, what)())

    def op_batch(self, req):
        return {"results": [self.handle(r) for r in req["requests"]]}

    def handle(self, req):
        try:
            fn = getattr(self, "op_" + req.get("op", ""), None)
            if fn is None:
                raise ValueError("unknown op %r" % req.get("op"))
            out = fn(req)
            out["ok"] = True
            return out
        except Exception as e:  # reported to the Go side, which fails the test
            return {"ok": False, "error": "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc(limit=4))}


def dec(v):
    """Decodes a typed string (see enc) back to a Python value."""
    if v == "null":
        return None
    tag, _, body = v.partition(":")
    if tag == "b":
        return body == "true"
    if tag == "i":
        return int(body)
    if tag == "f":
        return float("nan") if body == "NaN" else struct.unpack(">d", bytes.fromhex(body))[0]
    if tag == "d":
        return decimal.Decimal(body)
    if tag == "s":
        return body
    if tag == "x":
        return base64.b64decode(body)
    if tag == "date":
        return _EPOCH_DATE + datetime.timedelta(days=int(body))
    if tag == "time":
        n = int(body)
        return datetime.time(n // 3600000000, n // 60000000 % 60, n // 1000000 % 60, n % 1000000)
    if tag == "ts":
        return _EPOCH + datetime.timedelta(microseconds=int(body))
    raise ValueError("cannot decode %r" % v)


def expr(f):
    """Builds a PyIceberg expression from its JSON form:
    {"op":"eq|ne|lt|le|gt|ge","col":C,"value":typed} | {"op":"is_null|not_null|is_nan|not_nan","col":C}
    | {"op":"and|or","args":[...]} | {"op":"not","arg":...}."""
    from pyiceberg import expressions as x

    op = f["op"]
    binary = {"eq": x.EqualTo, "ne": x.NotEqualTo, "lt": x.LessThan, "le": x.LessThanOrEqual, "gt": x.GreaterThan, "ge": x.GreaterThanOrEqual}
    unary = {"is_null": x.IsNull, "not_null": x.NotNull, "is_nan": x.IsNaN, "not_nan": x.NotNaN}
    if op in binary:
        return binary[op](f["col"], dec(f["value"]))
    if op in unary:
        return unary[op](f["col"])
    if op in ("and", "or"):
        args = [expr(a) for a in f["args"]]
        out = args[0]
        for a in args[1:]:
            out = x.And(out, a) if op == "and" else x.Or(out, a)
        return out
    if op == "not":
        return x.Not(expr(f["arg"]))
    raise ValueError("unknown filter op %r" % op)


def arrow_rows(t):
    cols = t.column_names
    rows = [[enc(r[c]) for c in cols] for r in t.to_pylist()]
    return {"columns": cols, "rows": rows}


def main():
    eng = Engines()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            ans = {"ok": False, "error": "bad request: %s" % e}
        else:
            ans = eng.handle(req)
        _out.write(json.dumps(ans, allow_nan=False) + "\n")
        _out.flush()
    if eng.spark is not None:
        eng.spark.stop()


if __name__ == "__main__":
    main()
