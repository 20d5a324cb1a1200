package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/icerun/icerun/partition"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/parquetfile"
)

// createCmd creates a table, and its namespace when missing.
func createCmd(ctx context.Context, e *env, args []string) error {
	e.mayCreate = true
	fs := e.tableFlags()
	schemaFrom := fs.String("schema-from", "", "Parquet file, or folder of them (Hive col=value folders add their columns), whose schema the table takes; columns get fresh field ids")
	schemaJSON := fs.String("schema", "", `Iceberg schema JSON ({"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}), or @FILE`)
	spec := fs.String("partition", "", "partition spec in Spark's syntax: col, years(c), months(c), days(c), hours(c), bucket(N,c), truncate(W,c), comma-separated; e.g. 'days(event_ts),bucket(8,id)' (default: unpartitioned)")
	var required stringList
	fs.Var(&required, "required", "with -schema-from: make these `COLUMNS` required, comma-separated or repeated (default: every column optional, whatever the file says, so that a later null is accepted)")
	var identifier stringList
	fs.Var(&identifier, "identifier-fields", "the table's identifier fields (its row key, such as the source's primary key: Iceberg's identifier-field-ids), `COLUMNS` comma-separated or repeated; required top-level primitive columns (with -schema-from they are made required). `icerun sink -format debezium` upserts on them when -upsert is not given")
	version := fs.Int("format-version", 2, "Iceberg format version: 1, 2 or 3")
	var props stringList
	fs.Var(&props, "property", "table property `k=v` (repeatable)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if (*schemaFrom == "") == (*schemaJSON == "") {
		return fmt.Errorf("%w: give one of -schema-from and -schema", errUsage)
	}
	if *version < 1 || *version > 3 {
		return fmt.Errorf("%w: -format-version %d: icerun writes format 1, 2 and 3", errUsage, *version)
	}
	if len(required) > 0 && *schemaFrom == "" {
		return fmt.Errorf("%w: -required goes with -schema-from (a -schema says required itself)", errUsage)
	}
	tprops := iceberg.Properties{"format-version": strconv.Itoa(*version)}
	for _, kv := range props {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%w: -property %q: want k=v", errUsage, kv)
		}
		tprops[k] = v
	}
	ident, err := e.ident()
	if err != nil {
		return err
	}
	if *schemaFrom != "" {
		required = append(required, identifier...)
	}
	sch, err := createSchema(ctx, *schemaFrom, *schemaJSON, required, *version)
	if err != nil {
		return err
	}
	if sch, err = withIdentifierFields(sch, identifier); err != nil {
		return fmt.Errorf("%w: -identifier-fields: %w", errUsage, err)
	}
	ps, err := parseSpec(*spec, sch)
	if err == nil {
		err = partition.CheckFieldNames(ps) // a name an Avro manifest cannot hold fails every write
	}
	if err != nil {
		return fmt.Errorf("%w: -partition: %w", errUsage, err)
	}
	ctx, cat, err := e.catalog(ctx)
	if err != nil {
		return err
	}
	ns := catalog.NamespaceFromIdent(ident)
	if ok, err := cat.CheckNamespaceExists(ctx, ns); err != nil {
		return fmt.Errorf("namespace %s in %s: %w", strings.Join(ns, "."), e.where(), err)
	} else if !ok {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return fmt.Errorf("create namespace %s in %s: %w", strings.Join(ns, "."), e.where(), err)
		}
	}
	tbl, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&ps), catalog.WithProperties(tprops))
	if err != nil {
		return fmt.Errorf("create %s in %s: %w", e.tableName, e.where(), err)
	}
	tspec := tbl.Spec()
	specText := tspec.String()
	if tspec.NumFields() == 0 {
		specText = "unpartitioned (replace without -key replaces the whole table)"
	}
	fmt.Fprintf(e.out, "created %s at %s (format v%d)\nschema:\n%s\npartition spec: %s\n", e.tableName, tbl.Location(), tbl.Metadata().Version(), indent(tbl.Schema().String()), specText)
	return nil
}

// createSchema reads the schema from Parquet files (and their Hive
// folders) or an Iceberg JSON. A schema read from files has optional
// columns but those named in required.
func createSchema(ctx context.Context, from, js string, required []string, version int) (*iceberg.Schema, error) {
	if from != "" {
		files, err := parquetfile.List([]string{from})
		if err != nil {
			return nil, err
		}
		r, err := parquetfile.Open(ctx, []string{from}, parquetfile.WithHiveColumns(parquetfile.FolderColumns(files)...))
		if err != nil {
			return nil, err
		}
		defer r.Release()
		return fileSchema(from, r.Schema(), required, version)
	}
	data := []byte(js)
	if path, ok := strings.CutPrefix(js, "@"); ok {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	sch := new(iceberg.Schema)
	if err := json.Unmarshal(data, sch); err != nil {
		return nil, fmt.Errorf("%w: -schema: %v", errUsage, err)
	}
	return sch, nil
}

// fileSchema is the Iceberg schema of an input's Arrow schema for a table
// of format version: optional top-level columns but those of required
// (comma-separated names), types as tableType makes them.
func fileSchema(from string, sc *arrow.Schema, required []string, version int) (*iceberg.Schema, error) {
	want := map[string]bool{}
	for _, r := range required {
		for _, name := range strings.Split(r, ",") {
			if name = strings.TrimSpace(name); name != "" {
				want[name] = true
			}
		}
	}
	fields := slices.Clone(sc.Fields())
	for i := range fields {
		fields[i].Type = tableType(fields[i].Type, version)
		fields[i].Nullable = !want[fields[i].Name]
		delete(want, fields[i].Name)
	}
	if len(want) > 0 {
		return nil, fmt.Errorf("%w: -required: no column %s in %s", errUsage, strings.Join(slices.Sorted(maps.Keys(want)), ", "), from)
	}
	md := sc.Metadata()
	sch, err := icetable.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema(fields, &md), version < 3)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", from, err)
	}
	return sch, nil
}

// tableType is dt with the types whose Iceberg counterparts would not hold
// every value replaced: unsigned integers as Spark reads Parquet's UINT_32
// and UINT_64 (uint32 a long, where iceberg-go would make an int that the
// following load refuses; uint64 a decimal(20, 0)), and, below format
// version 3, nanosecond timestamps as microsecond ones (a load then
// refuses values with nanoseconds; on version 3 they are timestamp_ns).
func tableType(dt arrow.DataType, version int) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.Uint32Type:
		return arrow.PrimitiveTypes.Int64
	case *arrow.Uint64Type:
		return &arrow.Decimal128Type{Precision: 20, Scale: 0}
	case *arrow.TimestampType:
		if t.Unit == arrow.Nanosecond && version < 3 {
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: t.TimeZone}
		}
	case *arrow.StructType:
		fields := slices.Clone(t.Fields())
		for i := range fields {
			fields[i].Type = tableType(fields[i].Type, version)
		}
		return arrow.StructOf(fields...)
	case *arrow.ListType:
		elem := t.ElemField()
		elem.Type = tableType(elem.Type, version)
		return arrow.ListOfField(elem)
	case *arrow.LargeListType:
		elem := t.ElemField()
		elem.Type = tableType(elem.Type, version)
		return arrow.LargeListOfField(elem)
	case *arrow.MapType:
		key, item := t.KeyField(), t.ItemField()
		key.Type, item.Type = tableType(key.Type, version), tableType(item.Type, version)
		m := arrow.MapOfFields(key, item)
		m.KeysSorted = t.KeysSorted
		return m
	}
	return dt
}

// parseSpec parses Spark's partition transform syntax against sch. Field
// names follow Spark's: the column for identity, else col_year, col_month,
// col_day, col_hour, col_bucket, col_trunc.
func parseSpec(s string, sch *iceberg.Schema) (iceberg.PartitionSpec, error) {
	var opts []iceberg.PartitionOption
	for _, term := range splitTop(s) {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		col, tr, suffix, err := parseTerm(term)
		if err != nil {
			return iceberg.PartitionSpec{}, err
		}
		if _, ok := sch.FindFieldByName(col); !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("%s: no column %q in the schema", term, col)
		}
		opts = append(opts, iceberg.AddPartitionFieldByName(col, col+suffix, tr, sch, nil))
	}
	return iceberg.NewPartitionSpecOpts(opts...)
}

// parseTerm parses one transform term.
func parseTerm(term string) (col string, tr iceberg.Transform, suffix string, err error) {
	open := strings.IndexByte(term, '(')
	if open < 0 {
		return term, iceberg.IdentityTransform{}, "", nil
	}
	if !strings.HasSuffix(term, ")") {
		return "", nil, "", fmt.Errorf("%s: want fn(column)", term)
	}
	fn := strings.ToLower(strings.TrimSpace(term[:open]))
	var args []string
	for _, a := range strings.Split(term[open+1:len(term)-1], ",") {
		args = append(args, strings.TrimSpace(a))
	}
	// num returns the numeric and the column argument of bucket and
	// truncate, in either order.
	num := func() (int, string, error) {
		if len(args) != 2 {
			return 0, "", fmt.Errorf("%s: want %s(N, column)", term, fn)
		}
		if n, err := strconv.Atoi(args[0]); err == nil && n > 0 {
			return n, args[1], nil
		}
		if n, err := strconv.Atoi(args[1]); err == nil && n > 0 {
			return n, args[0], nil
		}
		return 0, "", fmt.Errorf("%s: want a positive number and a column", term)
	}
	switch fn {
	case "bucket":
		n, c, err := num()
		return c, iceberg.BucketTransform{NumBuckets: n}, "_bucket", err
	case "truncate":
		n, c, err := num()
		return c, iceberg.TruncateTransform{Width: n}, "_trunc", err
	}
	if len(args) != 1 || args[0] == "" {
		return "", nil, "", fmt.Errorf("%s: want %s(column)", term, fn)
	}
	switch fn {
	case "year", "years":
		return args[0], iceberg.YearTransform{}, "_year", nil
	case "month", "months":
		return args[0], iceberg.MonthTransform{}, "_month", nil
	case "day", "days", "date":
		return args[0], iceberg.DayTransform{}, "_day", nil
	case "hour", "hours", "date_hour":
		return args[0], iceberg.HourTransform{}, "_hour", nil
	case "identity":
		return args[0], iceberg.IdentityTransform{}, "", nil
	}
	return "", nil, "", fmt.Errorf("%s: unknown transform %q (identity, years, months, days, hours, bucket, truncate)", term, fn)
}

// splitTop splits s at the commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
