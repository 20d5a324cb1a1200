package main

import (
	"context"
	"time"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// morUpserts makes n merge-on-read upserts into day's partition of
// perDay rows, each of 10k existing orders spread over the partition
// (a different 10k each time) with a changed amount and 10k new orders:
// the partition of the compaction and read scenarios. With compact, the
// partition is compacted afterwards (the read after compaction).
func morUpserts(ctx context.Context, w *table.Writer, perDay, n int, compact bool) error {
	key, err := w.Key("event_date=" + day.Format(time.DateOnly))
	if err != nil {
		return err
	}
	step := perDay / 10_000
	for u := range n {
		orders := make([]orderdata.Order, 0, 20_000)
		for k := range 10_000 {
			o := orderdata.At(day, k*step+u%step, perDay)
			o.Amount += int64(u + 1)
			orders = append(orders, o)
		}
		for k := range 10_000 {
			id := perDay + u*10_000 + k
			orders = append(orders, orderdata.At(day, id, perDay+n*10_000))
		}
		rdr := orderdata.Reader(orders, 8192)
		_, err := w.Upsert(ctx, rdr, "order_id")
		rdr.Release()
		if err != nil {
			return err
		}
	}
	if compact {
		_, err = w.Compact(ctx, key)
	}
	return err
}

// compactGo is icerun's step of the compact scenario: one Compact of
// day's partition.
func compactGo(ctx context.Context, w *table.Writer) error {
	key, err := w.Key("event_date=" + day.Format(time.DateOnly))
	if err != nil {
		return err
	}
	_, err = w.Compact(ctx, key)
	return err
}
