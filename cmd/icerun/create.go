package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/parquetfile"
)

// createCmd creates a table, and its namespace when missing.
func createCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	schemaFrom := fs.String("schema-from", "", "Parquet file (or folder) whose schema the table takes; columns get fresh field ids")
	schemaJSON := fs.String("schema", "", `Iceberg schema JSON ({"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}), or @FILE`)
	spec := fs.String("partition", "", "partition spec in Spark's syntax: col, years(c), months(c), days(c), hours(c), bucket(N,c), truncate(W,c), comma-separated; e.g. 'days(event_ts),bucket(8,id)'")
	version := fs.Int("format-version", 2, "Iceberg format version: 1 or 2")
	var props stringList
	fs.Var(&props, "property", "table property k=v (repeatable)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if (*schemaFrom == "") == (*schemaJSON == "") {
		return fmt.Errorf("%w: give one of -schema-from and -schema", errUsage)
	}
	if *version != 1 && *version != 2 {
		return fmt.Errorf("%w: -format-version %d: icerun writes format 1 and 2", errUsage, *version)
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
	sch, err := createSchema(ctx, *schemaFrom, *schemaJSON)
	if err != nil {
		return err
	}
	ps, err := parseSpec(*spec, sch)
	if err != nil {
		return fmt.Errorf("%w: -partition: %w", errUsage, err)
	}
	ctx, cat, err := e.catalog(ctx)
	if err != nil {
		return err
	}
	ns := catalog.NamespaceFromIdent(ident)
	if ok, err := cat.CheckNamespaceExists(ctx, ns); err != nil {
		return fmt.Errorf("namespace %s: %w", strings.Join(ns, "."), err)
	} else if !ok {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return fmt.Errorf("create namespace %s: %w", strings.Join(ns, "."), err)
		}
	}
	tbl, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&ps), catalog.WithProperties(tprops))
	if err != nil {
		return fmt.Errorf("create %s: %w", e.tableName, err)
	}
	fmt.Fprintf(e.out, "created %s at %s (format v%d)\nschema:\n%s\npartition spec: %s\n", e.tableName, tbl.Location(), tbl.Metadata().Version(), indent(tbl.Schema().String()), tbl.Spec())
	return nil
}

// createSchema reads the schema from a Parquet file or an Iceberg JSON.
func createSchema(ctx context.Context, from, js string) (*iceberg.Schema, error) {
	if from != "" {
		r, err := parquetfile.Open(ctx, []string{from})
		if err != nil {
			return nil, err
		}
		defer r.Release()
		sch, err := icetable.ArrowSchemaToIcebergWithFreshIDs(r.Schema(), true)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", from, err)
		}
		return sch, nil
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
