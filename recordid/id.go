package recordid

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

// Deriver computes a UUIDv5 per row from chosen columns: the SHA-1 name
// based UUID (RFC 9562) of the row's canonical bytes ([Encoder]) under a
// namespace. It is what uuid.NewSHA1(namespace, bytes) returns, computed
// without a per-row allocation. A Deriver is not safe for concurrent use;
// make one per goroutine.
type Deriver struct {
	ns  uuid.UUID
	enc *Encoder
	h   hash.Hash
	buf []byte
	sum []byte
	txt [36]byte
}

// New returns a Deriver of the named columns under namespace. Choose one
// namespace per kind of record (e.g. uuid.NewSHA1(uuid.NameSpaceURL,
// []byte("https://example.com/order-events"))) and never change it: it is
// part of every id.
func New(namespace uuid.UUID, columns ...string) (*Deriver, error) {
	enc, err := NewEncoder(columns...)
	if err != nil {
		return nil, err
	}
	return &Deriver{ns: namespace, enc: enc, h: sha1.New()}, nil
}

// IDs returns the id of every row of rec as UUID text
// ("xxxxxxxx-xxxx-5xxx-yxxx-xxxxxxxxxxxx"). The caller releases it.
func (d *Deriver) IDs(rec arrow.RecordBatch) (*array.String, error) {
	if err := d.enc.Bind(rec); err != nil {
		return nil, err
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	n := int(rec.NumRows())
	b.Reserve(n)
	b.ReserveData(n * 36)
	for i := 0; i < n; i++ {
		b.BinaryBuilder.Append(d.text(i))
	}
	return b.NewStringArray(), nil
}

// ID returns the id of one row of rec.
func (d *Deriver) ID(rec arrow.RecordBatch, row int) (uuid.UUID, error) {
	if err := d.enc.Bind(rec); err != nil {
		return uuid.Nil, err
	}
	var u uuid.UUID
	copy(u[:], d.raw(row))
	return u, nil
}

// raw computes the 16 bytes of the bound row's id.
func (d *Deriver) raw(row int) []byte {
	d.buf = d.enc.Append(d.buf[:0], row)
	d.h.Reset()
	d.h.Write(d.ns[:])
	d.h.Write(d.buf)
	d.sum = d.h.Sum(d.sum[:0])
	u := d.sum[:16]
	u[6] = (u[6] & 0x0f) | 0x50 // version 5
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 9562 variant
	return u
}

// text formats the bound row's id into d.txt.
func (d *Deriver) text(row int) []byte {
	u := d.raw(row)
	hex.Encode(d.txt[0:8], u[0:4])
	d.txt[8] = '-'
	hex.Encode(d.txt[9:13], u[4:6])
	d.txt[13] = '-'
	hex.Encode(d.txt[14:18], u[6:8])
	d.txt[18] = '-'
	hex.Encode(d.txt[19:23], u[8:10])
	d.txt[23] = '-'
	hex.Encode(d.txt[24:], u[10:16])
	return d.txt[:]
}

// Append returns rec with a string column name of the ids appended as the
// last column. It fails when rec already has a column of that name. The
// caller releases both batches.
func (d *Deriver) Append(rec arrow.RecordBatch, name string) (arrow.RecordBatch, error) {
	if len(rec.Schema().FieldIndices(name)) > 0 {
		return nil, fmt.Errorf("recordid: append %q: the batch already has that column", name)
	}
	ids, err := d.IDs(rec)
	if err != nil {
		return nil, err
	}
	defer ids.Release()
	fields := append(rec.Schema().Fields(), arrow.Field{Name: name, Type: arrow.BinaryTypes.String})
	md := rec.Schema().Metadata()
	cols := append(append([]arrow.Array(nil), rec.Columns()...), ids)
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows()), nil
}
