// Command orders runs an order-events pipeline that is safe to rerun, end
// to end, on the embedded catalog.
//
// Raw order events land once a day, with redeliveries, and one "paid"
// event of the 14th lands a day late, with the 15th's events. Each run
//
//  1. gives every event an id derived from its source identity (order id,
//     event type, event time; package recordid) and upserts the landing
//     into staging_orders by that identity, so a redelivered event replaces
//     itself;
//  2. recomputes daily_revenue for every day the landing touched, from
//     staging_orders read at the snapshot of step 1, never adding to the
//     previous total.
//
// The run of the second landing is killed between the two steps, then
// rerun, then the whole landing is delivered and processed once more. The
// program prints the revenue per day after each stage: the late event
// raises the 14th's revenue once, and neither the rerun nor the replay
// doubles anything.
//
//	go run ./examples/orders [-warehouse DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/icerun/icerun/catalogconfig"
)

func main() {
	warehouse := flag.String("warehouse", "", "folder of the embedded catalog (default: a new temporary folder)")
	flag.Parse()
	dir := *warehouse
	if dir == "" {
		tmp, err := os.MkdirTemp("", "icerun-orders-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "orders:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := run(context.Background(), dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "orders:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, out io.Writer) error {
	cat, err := catalogconfig.OpenLocal(ctx, dir)
	if err != nil {
		return err
	}
	if err := createTables(ctx, cat); err != nil {
		return err
	}
	first, second, late := landings()
	p := Pipeline{Code: "orders-v1"}
	show := func(title string) error {
		lines, err := revenueByDay(ctx, cat)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n  %s\n", title, strings.Join(lines, "\n  "))
		return nil
	}

	if err := p.Run(ctx, cat, reader(first, 4)); err != nil {
		return err
	}
	if err := show("after landing 1 (without the late event):"); err != nil {
		return err
	}

	killed := Pipeline{Code: p.Code, Kill: func(step string) error {
		if step == "staging upsert" {
			return fmt.Errorf("%w after the %s", errKilled, step)
		}
		return nil
	}}
	err = killed.Run(ctx, cat, reader(second, 4))
	if !errors.Is(err, errKilled) {
		return fmt.Errorf("the killed run ended with %v", err)
	}
	fmt.Fprintf(out, "landing 2: %v (late %s event of order %d at %s is staged, the rollup is not)\n", err, late.Type, late.OrderID, late.At.Format("2006-01-02 15:04"))
	if err := show("revenue after the killed run:"); err != nil {
		return err
	}

	if err := p.Run(ctx, cat, reader(second, 4)); err != nil {
		return err
	}
	if err := show("after the rerun of landing 2:"); err != nil {
		return err
	}
	if err := p.Run(ctx, cat, reader(append(append(second, second...), first...), 3)); err != nil {
		return err
	}
	if err := show("after both landings are delivered again:"); err != nil {
		return err
	}
	fmt.Fprintf(out, "from scratch:\n  %s\n", strings.Join(fromScratch(first, second), "\n  "))
	return nil
}

// fromScratch is the revenue per day computed directly from every distinct
// event: what the table must hold.
func fromScratch(landings ...[]Event) []string {
	type day struct{ orders, sum int64 }
	seen := map[Event]bool{}
	days := map[string]*day{}
	for _, l := range landings {
		for _, e := range l {
			if seen[e] {
				continue
			}
			seen[e] = true
			d := e.At.Format("2006-01-02")
			if days[d] == nil {
				days[d] = &day{}
			}
			if e.Type == "paid" {
				days[d].orders++
				days[d].sum += e.Amount
			}
		}
	}
	var out []string
	for d, v := range days {
		out = append(out, fmt.Sprintf("%s: %d paid orders, revenue %d", d, v.orders, v.sum))
	}
	slices.Sort(out)
	return out
}
