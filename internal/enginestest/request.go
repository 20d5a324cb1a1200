package enginestest

import "encoding/json"

// Request is one request to engines.py (see its doc for the ops).
type Request map[string]any

// Response is one answer: Columns and Rows for queries.
type Response struct {
	OK      bool              `json:"ok"`
	Error   string            `json:"error"`
	Columns []string          `json:"columns"`
	Rows    [][]any           `json:"rows"`
	Results []json.RawMessage `json:"results"`
}

// Named returns the rows as [Row] maps keyed by column name.
func (r Response) Named() []Row {
	out := make([]Row, len(r.Rows))
	for i, vals := range r.Rows {
		row := make(Row, len(vals))
		for c, v := range vals {
			row[r.Columns[c]] = v
		}
		out[i] = row
	}
	return out
}

// SparkSQL is the request for one Spark SQL statement.
func SparkSQL(sql string) Request { return Request{"op": "spark_sql", "sql": sql} }

// Scan is a PyIceberg table scan.
type Scan struct {
	Filter     string   // a PyIceberg expression string ("" for all rows)
	Where      Expr     // or the filter in its JSON form (nil for none)
	SnapshotID int64    // 0 for the current snapshot
	Columns    []string // nil for all columns
}

// PyIcebergScan is the request for a PyIceberg scan of table ("ns.t") in
// catalog cat.
func PyIcebergScan(cat, table string, s Scan) Request {
	req := Request{"op": "pyiceberg_scan", "catalog": cat, "table": table, "filter": nil, "snapshot_id": nil, "columns": nil}
	if s.Filter != "" {
		req["filter"] = s.Filter
	}
	if s.Where != nil {
		req["filter"] = s.Where
	}
	if s.SnapshotID != 0 {
		req["snapshot_id"] = s.SnapshotID
	}
	if s.Columns != nil {
		req["columns"] = s.Columns
	}
	return req
}

// Inspect is the request for a PyIceberg metadata table: what is one of
// snapshots, manifests, files, partitions, entries, history, refs,
// all_manifests.
func Inspect(cat, table, what string) Request {
	return Request{"op": "pyiceberg_inspect", "catalog": cat, "table": table, "what": what}
}

// Expr is a PyIceberg filter in its JSON form (engines.py's expr), built
// with typed values so that any value crosses the pipe exactly.
type Expr map[string]any

// Cmp is col <op> value, op one of eq, ne, lt, le, gt, ge; value is typed.
func Cmp(col, op, value string) Expr { return Expr{"op": op, "col": col, "value": value} }

// IsNull is col IS NULL.
func IsNull(col string) Expr { return Expr{"op": "is_null", "col": col} }

// IsNaN is col IS NaN.
func IsNaN(col string) Expr { return Expr{"op": "is_nan", "col": col} }

// And is the conjunction of args.
func And(args ...Expr) Expr { return Expr{"op": "and", "args": args} }
