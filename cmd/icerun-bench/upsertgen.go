package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// keyOrder is how the -upsert-stream bench's order ids are laid out.
type keyOrder string

const (
	// timeOrdered ids increase as orders are placed: a new order takes
	// the next id, above every existing one, and updates and deletes hit
	// the newest orders (recentShare of the table's size).
	timeOrdered keyOrder = "time-ordered"
	// randomKeys are ids spread over the whole long range (as a UUID's
	// bits are): a new order lands anywhere among the existing ones, and
	// updates and deletes hit any order, uniformly.
	randomKeys keyOrder = "random"
)

// recentShare is the share of the table's orders that time-ordered
// updates and deletes hit: the newest ones.
const recentShare = 0.05

// The change mix, in percent: the rest are inserts of new orders.
const (
	updatePercent = 80
	deletePercent = 2
)

// changeKind is what a generated change does to its order.
type changeKind uint8

const (
	changeUpdate changeKind = iota
	changeDelete
	changeInsert
)

// upsertEpoch is the updated_at of the loaded rows' newest; a change's
// updated_at follows from its sequence number (changeTime), so that the
// expected state can be computed again after the run.
var upsertEpoch = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// orderSchema is the table of the -upsert-stream bench: a current-state
// table of orders, one row per order_id.
var orderSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "version", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 3, Name: "status", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 5, Name: "updated_at", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
)

// orderArrowSchema is orderSchema's rows as the generator builds them.
var orderArrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "version", Type: arrow.PrimitiveTypes.Int64},
	{Name: "status", Type: arrow.BinaryTypes.String},
	{Name: "amount", Type: arrow.PrimitiveTypes.Int64},
	{Name: "updated_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

// changeGen generates the change stream of the -upsert-stream bench,
// deterministically from its seed: order i (an index; its order_id is
// orderID(i)) exists when i < next and it is not deleted. Change s has
// version s+1 (the loaded rows have version 0), so versions increase
// along the stream and the latest change of an order wins. Not safe for
// concurrent use.
type changeGen struct {
	keys    keyOrder
	loaded  int64 // orders 0 .. loaded-1 are the table's before the stream
	next    int64 // orders 0 .. next-1 were placed
	recent  int64 // time-ordered: updates and deletes hit the newest recent orders
	seq     int64 // changes generated
	rng     *rand.Rand
	deleted []uint64 // bitset by order index
	dels    int64    // orders deleted
}

func newChangeGen(keys keyOrder, tableRows int64, seed uint64) *changeGen {
	return &changeGen{keys: keys, loaded: tableRows, next: tableRows, recent: max(1, int64(float64(tableRows)*recentShare)),
		rng: rand.New(rand.NewPCG(seed, 0x1ce)), deleted: make([]uint64, tableRows/64+1)}
}

func (g *changeGen) isDeleted(i int64) bool {
	w := int(i / 64)
	return w < len(g.deleted) && g.deleted[w]&(1<<(i%64)) != 0
}

func (g *changeGen) setDeleted(i int64) {
	for int(i/64) >= len(g.deleted) {
		g.deleted = append(g.deleted, 0)
	}
	g.deleted[i/64] |= 1 << (i % 64)
	g.dels++
}

// live is the number of orders the table should hold.
func (g *changeGen) live() int64 { return g.next - g.dels }

// existing picks a live order: uniformly over all of them (random keys)
// or over the newest recent ones (time-ordered). ok is false when 64
// picks met only deleted orders.
func (g *changeGen) existing() (int64, bool) {
	lo := int64(0)
	if g.keys == timeOrdered {
		lo = max(0, g.next-g.recent)
	}
	for range 64 {
		i := lo + g.rng.Int64N(g.next-lo)
		if !g.isDeleted(i) {
			return i, true
		}
	}
	return 0, false
}

// change is one generated change: its sequence number, order index and kind.
type change struct {
	seq   int64
	order int64
	kind  changeKind
}

// nextChange generates the next change of the stream.
func (g *changeGen) nextChange() change {
	c := change{seq: g.seq, kind: changeInsert}
	g.seq++
	r := g.rng.IntN(100)
	if r < updatePercent+deletePercent {
		if i, ok := g.existing(); ok {
			c.order = i
			if r >= updatePercent {
				c.kind = changeDelete
				g.setDeleted(i)
			} else {
				c.kind = changeUpdate
			}
			return c
		}
	}
	c.order = g.next
	g.next++
	return c
}

// row is the table row a change writes (a delete writes its tombstone
// row: status "deleted").
type row struct {
	orderID, version, amount int64
	status                   string
	updatedAt                int64 // µs since the epoch
}

var updateStatuses = [...]string{"paid", "shipped", "delivered"}

// changeRow is the row change c writes.
func (g *changeGen) changeRow(c change) row {
	r := row{orderID: g.orderID(c.order), version: c.seq + 1, amount: 100 + (c.order*31+c.seq)%100_000,
		updatedAt: upsertEpoch.UnixMicro() + 200*(c.seq+1)}
	switch c.kind {
	case changeInsert:
		r.status = "created"
	case changeDelete:
		r.status = "deleted"
	default:
		r.status = updateStatuses[c.seq%3]
	}
	return r
}

// loadedRow is the row order i holds before the stream (version 0).
func (g *changeGen) loadedRow(i int64) row {
	return row{orderID: g.orderID(i), amount: 100 + i%100_000, status: "created",
		updatedAt: upsertEpoch.UnixMicro() - 1000*(g.loaded-i)}
}

// orderID is the order_id of order index i.
func (g *changeGen) orderID(i int64) int64 {
	if g.keys == randomKeys {
		return int64(scramble(uint64(i)))
	}
	return i
}

// orderIndex is the order index of order_id id (orderID's inverse).
func (g *changeGen) orderIndex(id int64) int64 {
	if g.keys == randomKeys {
		return int64(unscramble(uint64(id)))
	}
	return id
}

const (
	mask63 = 1<<63 - 1
	mix1   = 0x9e3779b97f4a7c15
	mix2   = 0xbf58476d1ce4e5b9
)

// scramble is a bijection of [0, 2^63): order indexes spread over the
// non-negative longs, as random keys are.
func scramble(x uint64) uint64 {
	x = x * mix1 & mask63
	x ^= x >> 31
	x = x * mix2 & mask63
	x ^= x >> 29
	return x
}

// unscramble is scramble's inverse.
func unscramble(x uint64) uint64 {
	x = unshift(x, 29)
	x = x * oddInverse(mix2) & mask63
	x = unshift(x, 31)
	return x * oddInverse(mix1) & mask63
}

// unshift inverts x ^= x >> s on 63 bits.
func unshift(x uint64, s uint) uint64 {
	y := x
	for k := s; k < 63; k += s {
		y ^= x >> k
	}
	return y
}

// oddInverse is the inverse of odd m modulo 2^64 (so modulo 2^63 too).
func oddInverse(m uint64) uint64 {
	inv := m
	for range 6 {
		inv *= 2 - m*inv
	}
	return inv
}

// batch builds the rows as an Arrow record of orderArrowSchema.
func batch(rows []row) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, orderArrowSchema)
	defer b.Release()
	ids, vers := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.Int64Builder)
	sts, amts := b.Field(2).(*array.StringBuilder), b.Field(3).(*array.Int64Builder)
	ts := b.Field(4).(*array.TimestampBuilder)
	for _, r := range rows {
		ids.Append(r.orderID)
		vers.Append(r.version)
		sts.Append(r.status)
		amts.Append(r.amount)
		ts.Append(arrow.Timestamp(r.updatedAt))
	}
	return b.NewRecordBatch()
}

// loadReader reads the table's loaded rows, orders 0 .. n-1, a batch at a
// time.
type loadReader struct {
	g       *changeGen
	n, at   int64
	batch   int64
	cur     arrow.RecordBatch
	refs    int64
	scratch []row
}

func (r *loadReader) Retain()                        { r.refs++ }
func (r *loadReader) Schema() *arrow.Schema          { return orderArrowSchema }
func (r *loadReader) Err() error                     { return nil }
func (r *loadReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *loadReader) Record() arrow.RecordBatch      { return r.cur }

func (r *loadReader) Release() {
	if r.refs--; r.refs == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *loadReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.at >= r.n {
		return false
	}
	r.scratch = r.scratch[:0]
	for i := r.at; i < min(r.n, r.at+r.batch); i++ {
		r.scratch = append(r.scratch, r.g.loadedRow(i))
	}
	r.at = min(r.n, r.at+r.batch)
	r.cur = batch(r.scratch)
	return true
}

// expectedState is what the table must hold after changes changes of a
// stream of keys over tableRows loaded orders from seed: the stream
// generated again, each order's last change (-1: the loaded row).
type expectedState struct {
	g    *changeGen
	last []int32
	kind []changeKind
}

func expect(keys keyOrder, tableRows int64, seed uint64, changes int64) (*expectedState, error) {
	if changes > 1<<31-2 {
		return nil, fmt.Errorf("%d changes: at most 2^31-2 are checked", changes)
	}
	g := newChangeGen(keys, tableRows, seed)
	e := &expectedState{g: g, last: make([]int32, tableRows, tableRows+changes/4), kind: make([]changeKind, tableRows, tableRows+changes/4)}
	for i := range e.last {
		e.last[i] = -1
	}
	for range changes {
		c := g.nextChange()
		if c.kind == changeInsert {
			e.last, e.kind = append(e.last, 0), append(e.kind, 0)
		}
		e.last[c.order], e.kind[c.order] = int32(c.seq), c.kind
	}
	return e, nil
}

// want is the row order i must hold, and whether it must hold one.
func (e *expectedState) want(i int64) (row, bool) {
	if i < 0 || i >= int64(len(e.last)) || e.g.isDeleted(i) {
		return row{}, false
	}
	if e.last[i] < 0 {
		return e.g.loadedRow(i), true
	}
	return e.g.changeRow(change{seq: int64(e.last[i]), order: i, kind: e.kind[i]}), true
}
