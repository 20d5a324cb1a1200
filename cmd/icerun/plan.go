package main

import (
	"context"
	"fmt"
	"strings"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

func planCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	keyText := fs.String("key", "", "partition key")
	codeVersion := fs.String("code-version", envOr("ICERUN_CODE_VERSION", table.DefaultCodeVersion), "code version the replace would record: with it, plan says whether the partition already holds exactly this input (ICERUN_CODE_VERSION)")
	var paths stringList
	fileFlag(fs, &paths, "Parquet file or folder that would replace it (optional): its rows are checked against the key")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	paths = append(paths, rest...)
	if *keyText == "" {
		return fmt.Errorf("%w: -key is required", errUsage)
	}
	e.codeVersion = *codeVersion
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	key, err := e.key(w, *keyText)
	if err != nil {
		return err
	}
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "replace %s of %s (dry run, nothing written)\n", key, e.tableName)
	if tbl.CurrentSnapshot() != nil {
		tasks, err := tbl.Scan(icetable.WithRowFilter(spec.Filter(key))).PlanFiles(ctx)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			f := t.File
			what := "delete"
			if int(f.SpecID()) != spec.ID() {
				what = "read (older spec: deleted, or rewritten without the key's rows)"
			} else if k, err := spec.KeyFromValues(f.Partition()); err != nil || k != key {
				continue
			}
			fmt.Fprintf(e.out, "  spec %d  %s  %s  (%d rows)\n", f.SpecID(), what, f.FilePath(), f.Count())
		}
	}
	if len(paths) == 0 {
		fmt.Fprintf(e.out, "  spec %d  add     the input's rows as new data files\n", spec.ID())
		return nil
	}
	rows, err := e.openInput(ctx, tbl, &key, paths)
	if err != nil {
		return err
	}
	defer rows.Release()
	chk, err := checkRows(ctx, tbl, spec, key, rows)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "  spec %d  add     new data files from %s  (%d rows)\n", spec.ID(), strings.Join(paths, ", "), chk.rows)
	if len(chk.ignored) > 0 {
		fmt.Fprintf(e.out, "ignored input columns (no table column): %s\n", strings.Join(chk.ignored, ", "))
	}
	if chk.outside > 0 {
		return fmt.Errorf("%w: %d of %d input rows are outside %s (the first: row %d of %s, counting from 1): a replace would reject this input and commit nothing", partition.ErrRowOutside, chk.outside, chk.rows, key, chk.firstRow, chk.firstFile)
	}
	fmt.Fprintf(e.out, "every input row belongs to %s\n", key)
	if last, ok := table.LastWrites(tbl, []string{key.String()})[key.String()]; ok && last.CodeVersion == w.CodeVersion() && last.Fingerprint != "" && last.Fingerprint == chk.fingerprint {
		fmt.Fprintf(e.out, "unchanged: the partition's last icerun write recorded exactly this input from code version %s: a replace would write nothing (unless another writer changed the partition since)\n", w.CodeVersion())
	}
	return nil
}

// rowCheck is what plan found in the input.
type rowCheck struct {
	rows, outside, firstRow int64
	firstFile               string
	ignored                 []string
	fingerprint             string
}

// checkRows resolves the input to the table schema and checks every row
// against key, as a replace would, without writing.
func checkRows(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, key partition.Key, rows *parquetfile.Reader) (rowCheck, error) {
	var c rowCheck
	nm := tbl.Metadata().NameMapping()
	res, err := schema.Resolve(rows.Schema(), tbl.Schema(), nm, schema.IgnoreUnknown)
	if err != nil {
		return c, err
	}
	c.ignored = res.Ignored()
	m, err := spec.Matcher(key, res.Schema())
	if err != nil {
		return c, err
	}
	var sum fingerprint.Sum
	for rows.Next() {
		rec, err := res.Apply(ctx, rows.RecordBatch())
		if err != nil {
			return c, err
		}
		mask, err := m.Mask(rec)
		sum.Add(rec)
		rec.Release()
		if err != nil {
			return c, err
		}
		for i, ok := range mask {
			if !ok {
				if c.outside == 0 {
					var at int64
					c.firstFile, at = rows.Position(i)
					c.firstRow = at + 1
				}
				c.outside++
			}
		}
		c.rows += int64(len(mask))
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	c.fingerprint = sum.String()
	return c, nil
}
