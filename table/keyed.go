package table

import (
	"fmt"
	"net/url"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
)

// keyedWrite lets a stager that writes the rows of one known partition skip
// iceberg-go's per-row partitioning: every row was already checked against
// the key, so the writers see the table as unpartitioned, with its data
// path set to the partition's folder, and each file they return is given
// the key's partition values. The files land where iceberg-go's
// partitioned writer puts them (data/<partition path>/, or under the
// object-store layout when the table uses it, both spelled as [dataPaths]
// says), with the same statistics.
//
// iceberg-go v0.7.0's table.WriteRecords has no option to pass a known
// partition; computing every row's partition again costs about a tenth of
// a one-core write.
type keyedWrite struct {
	view   *icetable.Table // tbl, unpartitioned, writing under the key's folder
	spec   iceberg.PartitionSpec
	values map[int]any // partition field id -> value, as iceberg-go's writer gives them
	folder string      // the partition's folder name, as iceberg-go spells it
}

// newKeyedWrite prepares writing rows of key (a key of spec, tbl's current
// spec) to tbl. It returns nil when the spec is unpartitioned to
// iceberg-go (no fields, or only void ones): its writer does not partition
// rows then.
func newKeyedWrite(tbl *icetable.Table, spec *partition.Spec, key partition.Key) (*keyedWrite, error) {
	values, err := spec.Values(key)
	if err != nil {
		return nil, err
	}
	ps := tbl.Spec()
	if ps.IsUnpartitioned() {
		return nil, nil
	}
	root, err := url.Parse(tbl.Location())
	if err != nil {
		return nil, err
	}
	b, err := icetable.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if err := b.AddPartitionSpec(iceberg.UnpartitionedSpec, false); err != nil {
		return nil, err
	}
	if err := b.SetDefaultSpecID(-1); err != nil {
		return nil, err
	}
	folder := partitionPath(tbl, values)
	dataPath := root.JoinPath("data", folder).String()
	if err := b.SetProperties(iceberg.Properties{icetable.WriteDataPathKey: dataPath}); err != nil {
		return nil, err
	}
	md, err := b.Build()
	if err != nil {
		return nil, err
	}
	view := icetable.New(tbl.Identifier(), md, tbl.MetadataLocation(), tbl.FS, nil)
	return &keyedWrite{view: view, spec: ps, values: values, folder: folder}, nil
}

// canonicalValues are the partition values of the key that f's values
// make (f is a data file of spec): the values iceberg-go's writer gives a
// file are the first row's as Arrow hands them out, and the key's values
// are what the keyed write and every other path record.
func canonicalValues(spec *partition.Spec, f iceberg.DataFile) (map[int]any, error) {
	key, err := spec.KeyFromValues(f.Partition())
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", f.FilePath(), err)
	}
	values, err := spec.Values(key)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", f.FilePath(), err)
	}
	return values, nil
}

// rebuildFile is f at path with partition values values of spec and sort
// order sortID (nil: none), every other field kept.
func rebuildFile(f iceberg.DataFile, path string, spec iceberg.PartitionSpec, values map[int]any, sortID *int) (iceberg.DataFile, error) {
	b, err := iceberg.NewDataFileBuilder(spec, f.ContentType(), path, f.FileFormat(), values, nil, nil, f.Count(), f.FileSizeBytes())
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", f.FilePath(), err)
	}
	b.ColumnSizes(f.ColumnSizes()).ValueCounts(f.ValueCounts()).NullValueCounts(f.NullValueCounts()).
		NaNValueCounts(f.NaNValueCounts()).
		LowerBoundValues(f.LowerBoundValues()).UpperBoundValues(f.UpperBoundValues()).
		SplitOffsets(f.SplitOffsets())
	if m := f.KeyMetadata(); m != nil {
		b.KeyMetadata(m)
	}
	if sortID != nil {
		b.SortOrderID(*sortID)
	}
	if id := f.FirstRowID(); id != nil {
		b.FirstRowID(*id)
	}
	return b.Build(), nil
}

// partitionRow is a partition tuple in spec field order, for
// iceberg.PartitionSpec.PartitionToPath.
type partitionRow []any

func (r partitionRow) Size() int          { return len(r) }
func (r partitionRow) Get(pos int) any    { return r[pos] }
func (r partitionRow) Set(pos int, v any) { r[pos] = v }
