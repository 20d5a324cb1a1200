package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"flag"
	"math/bits"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// forge regenerates testdata/additive_collision.json (a few seconds, some
// 40 MB): go test ./internal/fingerprint -run TestForgedAdditiveCollision -forge
var forge = flag.Bool("forge", false, "search a new collision of the former additive fingerprint")

// collisionFile holds two inputs of forgedRows rows (part, id, nonce), all
// three int64 and required: input A has row (1, i, Nonces[i]), input B row
// (1, i, 0). Under the former fingerprint (the row count and the sum
// modulo 2^128 of the rows' SHA-256, truncated to 128 bits) they are
// equal. The table tests replace a partition with both.
const collisionFile = "testdata/additive_collision.json"

const forgedRows = 512 // 2^9 lists: a k-tree of 9 levels

type collision struct {
	About  string   `json:"about"`
	Nonces []uint16 `json:"nonces"`
}

// TestForgedAdditiveCollision: the two inputs of collisionFile, which
// differ in every row, have the same former (additive) fingerprint, and
// different fingerprints now.
func TestForgedAdditiveCollision(t *testing.T) {
	if *forge {
		c := collision{
			About:  "two inputs of 512 rows (part, id, nonce): A = (1, i, nonces[i]), B = (1, i, 0); equal sums of 128-bit row hashes; see forgery_test.go",
			Nonces: searchAdditiveCollision(t),
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(collisionFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(collisionFile)
	if err != nil {
		t.Fatal(err)
	}
	var c collision
	if err := json.Unmarshal(b, &c); err != nil || len(c.Nonces) != forgedRows {
		t.Fatalf("%s: %v, %d nonces", collisionFile, err, len(c.Nonces))
	}
	a, bb := forgedInput(c.Nonces), forgedInput(make([]uint16, forgedRows))
	defer a.Release()
	defer bb.Release()
	if fa, fb := formerFingerprint(a), formerFingerprint(bb); fa != fb {
		t.Fatalf("the forged inputs' former sums differ (%x, %x): the test data is no collision", fa, fb)
	}
	var sa, sb Sum
	sa.Add(a)
	sb.Add(bb)
	if sa.String() == sb.String() {
		t.Errorf("two different inputs have one fingerprint %s", sa.String())
	}
}

// forgedInput is the rows (1, i, nonces[i]).
func forgedInput(nonces []uint16) arrow.RecordBatch {
	f := func(n string) arrow.Field { return arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64} }
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{f("part"), f("id"), f("nonce")}, nil))
	defer b.Release()
	for i, n := range nonces {
		b.Field(0).(*array.Int64Builder).Append(1)
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		b.Field(2).(*array.Int64Builder).Append(int64(n))
	}
	return b.NewRecordBatch()
}

// formerFingerprint is the fingerprint icerun recorded before this format
// ("f2"), recomputed from the row hashes: each row's SHA-256 truncated
// to 128 bits (little-endian), summed modulo 2^128.
func formerFingerprint(rec arrow.RecordBatch) u128 {
	var s u128
	for _, h := range new(Hasher).Hashes(rec, nil) {
		s = s.add(rowValue(h))
	}
	return s
}

// u128 is an integer modulo 2^128.
type u128 struct{ hi, lo uint64 }

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) neg() u128 { return u128{}.sub(a) }

func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// field is the w bits of a from bit z up.
func (a u128) field(z, w uint) uint64 {
	var v uint64
	switch {
	case z >= 64:
		v = a.hi >> (z - 64)
	case z == 0:
		v = a.lo
	default:
		v = a.lo>>z | a.hi<<(64-z)
	}
	return v & (1<<w - 1)
}

func rowValue(h Hash) u128 {
	return u128{hi: binary.LittleEndian.Uint64(h[8:16]), lo: binary.LittleEndian.Uint64(h[:8])}
}

// Wagner's k-tree algorithm (CRYPTO 2002) over the integers modulo 2^128:
// list i holds x = H(1, i, j) - H(1, i, 0) for nonces j >= 1, where H is
// the former row hash; choosing one x per list with a sum of zero gives
// an input (1, i, j_i) whose sum of row hashes equals that of (1, i, 0).
// With 2^9 lists, each pair of lists is merged on the next forgeBits bits
// (the lower ones are zero already, so no carry comes from below), 8
// levels zero 104 bits, and the root pairs the last two lists on all 128:
// about 5.2 million SHA-256 evaluations in all, where the birthday bound
// of a 128-bit hash is 2^64.
const (
	forgeBits  = 13
	forgeLeaf  = 10240 // nonces per list
	forgeLimit = 16384 // entries kept per merged list
)

type forgeEntry struct {
	v    u128
	a, b uint16 // the entries of the two lists below (a leaf's: its nonce)
}

type forger struct {
	t    testing.TB
	back map[int][]forgeEntry // node -> its entries, for walking back down
}

func searchAdditiveCollision(t testing.TB) []uint16 {
	f := &forger{t: t, back: make(map[int][]forgeEntry)}
	root := f.node(1, 0)
	if len(root) == 0 {
		t.Fatal("no collision found: raise forgeLeaf")
	}
	nonces := make([]uint16, forgedRows)
	f.walk(1, 0, root[0], nonces)
	return nonces
}

// node returns the entries of node n (heap order: root 1, children 2n
// and 2n+1) at the given depth: a node at depth 1 to 8 zeroes bits
// 13(8-depth) to 13(9-depth) of the sums of its children's entries, the
// root all 128. Leaves are at depth 9: list n-512.
func (f *forger) node(n, depth int) []forgeEntry {
	if depth == 9 {
		return f.leaf(n - forgedRows)
	}
	left, right := f.node(2*n, depth+1), f.node(2*n+1, depth+1)
	z := uint(forgeBits * (8 - depth)) // the bits below are zero in both
	var out []forgeEntry
	if depth == 0 {
		idx := make(map[u128]int, len(right))
		for j, e := range right {
			idx[e.v] = j
		}
		for i, e := range left {
			if j, ok := idx[e.v.neg()]; ok {
				out = append(out, forgeEntry{a: uint16(i), b: uint16(j)})
			}
		}
	} else {
		buckets := make(map[uint64][]int, len(right))
		for j, e := range right {
			k := e.v.field(z, forgeBits)
			buckets[k] = append(buckets[k], j)
		}
		for i, e := range left {
			want := (-e.v.field(z, forgeBits)) & (1<<forgeBits - 1)
			for _, j := range buckets[want] {
				if len(out) < forgeLimit {
					out = append(out, forgeEntry{v: e.v.add(right[j].v), a: uint16(i), b: uint16(j)})
				}
			}
		}
	}
	f.back[n] = out
	return out
}

func (f *forger) leaf(list int) []forgeEntry {
	base := formerRowValue(list, 0)
	out := make([]forgeEntry, forgeLeaf)
	for j := range out {
		out[j] = forgeEntry{v: formerRowValue(list, j+1).sub(base), a: uint16(j + 1)}
	}
	return out
}

// walk sets the nonce of every list below node n from its entry e.
func (f *forger) walk(n, depth int, e forgeEntry, nonces []uint16) {
	left, right := f.back[2*n], f.back[2*n+1]
	if depth == 8 { // children are leaves: their entries are nonces
		nonces[2*n-forgedRows], nonces[2*n+1-forgedRows] = e.a+1, e.b+1
		return
	}
	f.walk(2*n, depth+1, left[e.a], nonces)
	f.walk(2*n+1, depth+1, right[e.b], nonces)
}

// formerRowValue is the former row hash of (1, list, nonce), from its
// canonical bytes (three required int64 values).
func formerRowValue(list, nonce int) u128 {
	var row [27]byte
	for c, v := range []int64{1, int64(list), int64(nonce)} {
		row[9*c] = 1
		binary.LittleEndian.PutUint64(row[9*c+1:], uint64(v))
	}
	return rowValue(sha256.Sum256(row[:]))
}
