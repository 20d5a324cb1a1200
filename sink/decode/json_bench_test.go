package decode

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkJSONDecode decodes a poll of 10,000 messages (event times as
// RFC 3339 text or as integers) with JSON, against Arrow's reader alone
// (the baseline: no required-field check, no RFC 3339 text, one bad
// message fails the poll) in the same run; report the ratio.
func BenchmarkJSONDecode(b *testing.B) {
	sc := ordersSchema(&testing.T{})
	at := time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC)
	poll := func(text bool) [][]byte {
		msgs := make([][]byte, 10_000)
		for i := range msgs {
			ts := fmt.Sprint(at.Add(time.Duration(i) * time.Second).UnixMicro())
			if text {
				ts = fmt.Sprintf("%q", at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano))
			}
			v := fmt.Sprintf(`{"id":"m%d","ts":%s,"day":"2026-07-14"}`, i, ts)
			msgs[i] = []byte(v)
		}
		return msgs
	}
	ints, texts := poll(false), poll(true)
	b.Run("arrow-reader", func(b *testing.B) {
		for range b.N {
			bl := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for _, v := range ints {
				if err := bl.UnmarshalJSON(bytes.TrimSpace(v)); err != nil {
					b.Fatal(err)
				}
			}
			bl.NewRecordBatch().Release()
			bl.Release()
		}
	})
	for name, msgs := range map[string][][]byte{"json-integers": ints, "json-rfc3339": texts} {
		b.Run(name, func(b *testing.B) {
			dec := JSON(sc)
			for range b.N {
				d, err := dec(msgs)
				if err != nil || len(d.Bad) > 0 {
					b.Fatal(err, d.Bad)
				}
				d.Rows.Release()
			}
		})
	}
}
