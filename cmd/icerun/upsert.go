package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/icerun/icerun/table"
)

// upsertCmd inserts the input's rows, replacing the table's rows that
// share their key columns (table.Writer.Upsert).
func upsertCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	on := fs.String("on", "", "key columns, comma-separated: an input row replaces the table's row with the same values")
	orderBy := fs.String("order-by", "", "column that decides between input rows of the same key: the greatest wins (default: such rows must be identical)")
	var paths stringList
	fileFlag(fs, &paths, "Parquet file or folder with the rows")
	branchFlag(e, fs)
	commitLockFlag(e, fs)
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	paths = append(paths, rest...)
	if *on == "" || len(paths) == 0 {
		return fmt.Errorf("%w: -on and the input (-file PATH or files after the table) are required", errUsage)
	}
	var keys []string
	for _, c := range strings.Split(*on, ",") {
		if c = strings.TrimSpace(c); c != "" {
			keys = append(keys, c)
		}
	}
	var opts []table.Option
	if *orderBy != "" {
		opts = append(opts, table.WithUpsertOrder(*orderBy))
	}
	ctx, w, err := e.writer(ctx, opts...)
	if err != nil {
		return err
	}
	rows, err := e.openInput(ctx, w.Table(), nil, paths)
	if err != nil {
		return err
	}
	defer rows.Release()
	res, err := w.Upsert(ctx, rows, keys...)
	if err != nil {
		return err
	}
	e.printPartitions(w, res)
	return nil
}
