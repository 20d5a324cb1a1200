package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// ReplacePartition makes partition key contain exactly rows, atomically:
// one snapshot deletes every data file of the partition (and the rows of
// the key in files written under older specs) and adds the new files.
// Empty input empties the partition.
//
// Every row is resolved to the table schema (see package schema) and its
// partition value checked against key while streaming; a row outside key
// fails with [partition.ErrRowOutside]. On any error nothing is committed
// and the files this call wrote are removed (except after a
// [commit.ErrUnknownOutcome], when they may be live).
//
// When the partition already holds exactly this input from this code
// version and nothing touched it since, no snapshot is made and the result
// says Unchanged.
func (w *Writer) ReplacePartition(ctx context.Context, key partition.Key, rows array.RecordReader) (commit.Result, error) {
	op := fmt.Sprintf("table: replace %s", partName(w.name, key))
	if !key.IsValid() {
		return commit.Result{}, fmt.Errorf("%s: %w: zero key", op, partition.ErrMalformedKey)
	}
	return w.observed(ctx, opReplace, op, func(ctx context.Context) (commit.Result, error) {
		return w.replace(ctx, op, &key, rows)
	})
}

// ReplacePartitions replaces every partition that rows produce, and no
// other (dynamic overwrite), in one snapshot. Empty input is a no-op. The
// snapshot is what Java's ReplacePartitions writes: operation
// "overwrite", summary replace-partitions=true.
func (w *Writer) ReplacePartitions(ctx context.Context, rows array.RecordReader) (commit.Result, error) {
	op := "table: replace partitions of " + w.name
	return w.observed(ctx, opReplace, op, func(ctx context.Context) (commit.Result, error) {
		return w.replace(ctx, op, nil, rows)
	})
}

// replace writes rows and commits them. key is nil for a dynamic replace.
func (w *Writer) replace(ctx context.Context, op string, key *partition.Key, rows array.RecordReader) (commit.Result, error) {
	if rows == nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, ErrNilInput)
	}
	tbl, spec, err := w.begin(ctx, op)
	if err != nil {
		return commit.Result{}, err
	}
	if key != nil {
		if key.SpecID() != spec.ID() {
			return commit.Result{}, fmt.Errorf("%s: %w: key is for spec %d, the table's spec is %d", op, partition.ErrWrongSpec, key.SpecID(), spec.ID())
		}
		if err := checkPathSafe(tbl, spec, *key); err != nil {
			return commit.Result{}, fmt.Errorf("%s: %w", op, err)
		}
	}
	target := ""
	if key != nil {
		target = key.String()
	}
	var contract *schema.ContractCheck
	if w.cfg.contract != nil {
		if contract, err = w.cfg.contract.Check(rows.Schema()); err != nil {
			return commit.Result{}, w.quarantine(ctx, op, target, nil, rows, err)
		}
	}
	res, err := schema.Resolve(rows.Schema(), tbl.Schema(), tbl.NameMapping(), w.cfg.unknown)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	in := &input{tbl: tbl, spec: spec, res: res, contract: contract, sums: make(map[partition.Key]*fingerprint.Sum)}
	if key != nil {
		if in.matcher, err = spec.Matcher(*key, res.Schema()); err != nil {
			return commit.Result{}, fmt.Errorf("%s: %w", op, err)
		}
		in.sums[*key] = new(fingerprint.Sum)
	}

	st := newStager(ctx, tbl, res.Schema(), w.cfg)
	if err := st.sorted(w.cfg); err != nil {
		return commit.Result{}, w.fail(op, st, err)
	}
	if key != nil {
		if err := st.writeOnly(spec, *key); err != nil {
			return commit.Result{}, fmt.Errorf("%s: %w", op, err)
		}
	}
	if err := in.stream(ctx, rows, st); err != nil {
		var v *violation
		if errors.As(err, &v) {
			defer v.batch.Release()
			if rmErr := st.abort(err); rmErr != nil {
				return commit.Result{}, errors.Join(w.quarantine(ctx, op, target, v.batch, rows, v.err), rmErr)
			}
			return commit.Result{}, w.quarantine(ctx, op, target, v.batch, rows, v.err)
		}
		return commit.Result{}, w.fail(op, st, err)
	}
	files, err := st.finish()
	if err != nil {
		return commit.Result{}, w.fail(op, st, err)
	}
	parts, err := in.parts(files)
	if err != nil {
		return commit.Result{}, w.fail(op, st, err)
	}
	setInputs(rows, parts)
	if len(parts) == 0 { // dynamic replace of empty input
		r := commit.Result{Unchanged: true, Attempts: 0, Ignored: res.Ignored()}
		if s := tbl.CurrentSnapshot(); s != nil {
			r.SnapshotID = s.SnapshotID
		}
		return r, nil
	}

	kind := snapshotcommit.KindOverwrite
	if key == nil {
		kind = snapshotcommit.KindReplacePartitions
	}
	result, err := w.commitParts(ctx, op, kind, tbl, spec, parts, st, false)
	result.Ignored = res.Ignored()
	return result, err
}

// request is the commit of parts, written for tbl's current spec and
// schema, with this writer's lineage and settings.
func (w *Writer) request(op string, tbl *icetable.Table, spec *partition.Spec, parts []snapshotcommit.Part) snapshotcommit.Request {
	t := w.target(op)
	t.TableUUID, t.Spec, t.SchemaID = tbl.Metadata().TableUUID().String(), spec, tbl.Schema().ID
	return snapshotcommit.Request{
		Target:          t,
		Parts:           parts,
		Lineage:         snapshotcommit.Lineage{RunID: w.cfg.runID, CodeVersion: w.cfg.codeVersion, SchemaID: tbl.Schema().ID},
		TableProperties: mappingUpdate,
		Branch:          w.cfg.branch,
	}
}

// target is what every commit of op by this writer names: its table, a
// fresh commit token, the writer's retry policy and commit lock, and the
// hook that keeps the writer's table state. The caller sets the state the
// files were written for.
func (w *Writer) target(op string) snapshotcommit.Target {
	return snapshotcommit.Target{
		Op:        op,
		Ident:     w.ident,
		Token:     uuid.NewString(),
		Policy:    w.cfg.policy,
		Lock:      w.cfg.lock,
		Committed: w.setTable,
	}
}

// commitParts runs the commit loop for parts, a commit of kind whose files
// st wrote into tbl's current spec and schema. It removes the new files when nothing
// was committed (an error, or Unchanged), except after an unknown outcome,
// when they may be live. With skipHeld, the parts that hold their input
// already are left as they are (snapshotcommit.Request.SkipHeld); their
// files are the caller's to remove.
func (w *Writer) commitParts(ctx context.Context, op string, kind snapshotcommit.Kind, tbl *icetable.Table, spec *partition.Spec, parts []snapshotcommit.Part, st *stager, skipHeld bool) (commit.Result, error) {
	var files []iceberg.DataFile
	for _, p := range parts {
		files = append(files, p.Files...)
	}
	old := &oldSpecs{spec: spec, keys: parts, cfg: w.cfg}
	req := w.request(op, tbl, spec, parts)
	req.Kind = kind
	req.SkipHeld = skipHeld
	req.OldSpec = old.decide
	w.commitTurn.lock()
	// The newest state this writer knows: loaded at the start of this
	// call, or committed since by another call of the writer (commits of
	// one writer take turns), so that concurrent calls do not conflict
	// with each other on their first attempt.
	req.Base = w.Table()
	octx, done := w.observeCommit(ctx, &req, files)
	result, err := snapshotcommit.Replace(octx, w.cat, req)
	done(result, err)
	w.commitTurn.unlock()
	if err != nil {
		var unknown *commit.UnknownOutcomeError
		if errors.As(err, &unknown) {
			return result, err // the files may be live: leave them to orphan cleanup
		}
		return result, errors.Join(err, st.remove(files))
	}
	if result.Unchanged {
		if err := st.remove(files); err != nil {
			return result, fmt.Errorf("%s: unchanged, but removing the new files failed: %w", op, err)
		}
	}
	return result, nil
}

// fail aborts the stager, removing what it wrote, and returns err.
func (w *Writer) fail(op string, st *stager, err error) error {
	if rmErr := st.abort(err); rmErr != nil {
		return fmt.Errorf("%s: %w (removing staged files: %v)", op, err, rmErr)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// input streams rows into a stager, resolving, checking and fingerprinting
// every batch.
type input struct {
	tbl      *icetable.Table // the state the rows are written to
	spec     *partition.Spec // tbl's current spec
	res      *schema.Resolution
	contract *schema.ContractCheck // nil without a contract
	matcher  *partition.Matcher    // static replace only
	sums     map[partition.Key]*fingerprint.Sum
	hash     *hasher // while streaming
}

// stream resolves, checks and fingerprints rows and hands them to st;
// the fingerprints are final when it returns.
func (in *input) stream(ctx context.Context, rows array.RecordReader, st *stager) error {
	in.hash = startHasher()
	defer in.hash.wait()
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := rows.RecordBatch()
		if in.contract != nil {
			if err := in.contract.CheckBatch(ctx, rec); err != nil {
				rec.Retain()
				return &violation{batch: rec, err: err}
			}
		}
		out, err := in.res.Apply(ctx, rec)
		if err != nil {
			return err
		}
		if err := in.observe(out); err != nil {
			out.Release()
			return err
		}
		if err := st.add(out); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	return ctx.Err()
}

// observe checks a resolved batch against the key (static) or finds its
// keys (dynamic), and adds its rows to the fingerprints.
func (in *input) observe(rec arrow.RecordBatch) error {
	if in.matcher != nil {
		if err := in.matcher.Check(rec); err != nil {
			return err
		}
		for _, s := range in.sums {
			in.hash.add(rec, []*fingerprint.Sum{s}, nil)
		}
		return nil
	}
	keys, rowKey, err := in.spec.RowKeys(rec)
	if err != nil {
		return err
	}
	sums := make([]*fingerprint.Sum, len(keys))
	for i, k := range keys {
		if in.sums[k] == nil {
			if err := checkPathSafe(in.tbl, in.spec, k); err != nil {
				return err
			}
			in.sums[k] = new(fingerprint.Sum)
		}
		sums[i] = in.sums[k]
	}
	in.hash.add(rec, sums, rowKey)
	return nil
}

// parts groups the written files by partition, one part per key seen.
func (in *input) parts(files []iceberg.DataFile) ([]snapshotcommit.Part, error) {
	byKey := make(map[partition.Key][]iceberg.DataFile)
	for _, f := range files {
		k, err := in.spec.KeyFromValues(f.Partition())
		if err != nil {
			return nil, err
		}
		if in.sums[k] == nil {
			return nil, fmt.Errorf("internal error: data file %s is in partition %s, which the input did not produce", f.FilePath(), keyName(k))
		}
		byKey[k] = append(byKey[k], f)
	}
	parts := make([]snapshotcommit.Part, 0, len(in.sums))
	for k, s := range in.sums {
		var n int64
		for _, f := range byKey[k] {
			n += f.Count()
		}
		if n != s.Rows() {
			return nil, fmt.Errorf("%w: key %s: the input has %d rows, its data files %d", ErrSharedPartitionPath, shortKey(k), s.Rows(), n)
		}
		parts = append(parts, snapshotcommit.Part{Key: k, Files: byKey[k], Fingerprint: s.String(), Rows: s.Rows()})
	}
	slices.SortFunc(parts, func(a, b snapshotcommit.Part) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	return parts, nil
}

// violation is a batch that broke the writer's contract.
type violation struct {
	batch arrow.RecordBatch // retained
	err   error
}

func (v *violation) Error() string { return v.err.Error() }
func (v *violation) Unwrap() error { return v.err }

// mappingUpdate keeps the table's name mapping current: every column is
// found under its current name and every name it had before, so a
// producer that still sends an old name keeps resolving after a rename.
func mappingUpdate(md icetable.Metadata) (iceberg.Properties, error) {
	nm, changed := schema.MergeMapping(md.NameMapping(), md.CurrentSchema())
	if !changed {
		return nil, nil
	}
	b, err := json.Marshal(nm)
	if err != nil {
		return nil, err
	}
	return iceberg.Properties{icetable.DefaultNameMappingKey: string(b)}, nil
}
