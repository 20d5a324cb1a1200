package recordid

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Reader returns a reader of the batches of r, each with the id column name
// appended (see [Deriver.Append]). It takes over r: releasing the returned
// reader releases r. The Deriver must not be used elsewhere meanwhile.
func (d *Deriver) Reader(r array.RecordReader, name string) array.RecordReader {
	fields := append(r.Schema().Fields(), arrow.Field{Name: name, Type: arrow.BinaryTypes.String})
	md := r.Schema().Metadata()
	sc := arrow.NewSchema(fields, &md)
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		defer r.Release()
		for r.Next() {
			out, err := d.Append(r.RecordBatch(), name)
			if !yield(out, err) || err != nil {
				return
			}
		}
		if err := r.Err(); err != nil {
			yield(nil, err)
		}
	}
	return array.ReaderFromIter(sc, seq)
}
