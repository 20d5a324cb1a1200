package reruntest_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/reruntest"
	"github.com/icerun/icerun/table"
)

// Check a one-step pipeline (one day of orders replaced) against a commit
// that fails at its first attempt: the rerun must give the clean run's
// table. In a test, pass the test's t; here a minimal testing.TB reports.
func ExampleCheck() {
	t := &exampleTB{}
	defer t.cleanup()
	reruntest.Check(t, reruntest.Config{
		Setup: func(ctx context.Context, cat catalog.Catalog) error {
			return orderdata.CreateTable(ctx, cat, orderdata.FactOrders)
		},
		Run: func(ctx context.Context, cat catalog.Catalog) error {
			w, err := table.Open(ctx, cat, orderdata.FactOrders, table.WithRunID("nightly"))
			if err != nil {
				return err
			}
			key, err := w.Key("event_date=2026-07-14")
			if err != nil {
				return err
			}
			rows := orderdata.Reader(orderdata.Day(time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), 20), 8)
			defer rows.Release()
			_, err = w.ReplacePartition(ctx, key, rows)
			return err
		},
		Tables: []reruntest.Table{{Ident: orderdata.FactOrders}},
		Faults: []reruntest.Fault{reruntest.Commit},
		Ks:     []int{0},
	})
	fmt.Println("failed:", t.Failed())
	// Output: failed: false
}

// exampleTB is the part of testing.TB that Check uses.
type exampleTB struct {
	testing.TB // not set: other methods are not called
	mu         sync.Mutex
	failed     bool
	cleanups   []func()
	dirs       []string
}

func (t *exampleTB) Helper()                   {}
func (t *exampleTB) Name() string              { return "ExampleCheck" }
func (t *exampleTB) Logf(string, ...any)       {}
func (t *exampleTB) Log(...any)                {}
func (t *exampleTB) Errorf(f string, a ...any) { t.fail(fmt.Sprintf(f, a...)) }
func (t *exampleTB) Error(a ...any)            { t.fail(fmt.Sprint(a...)) }
func (t *exampleTB) Fatalf(f string, a ...any) { t.fail(fmt.Sprintf(f, a...)) }
func (t *exampleTB) Fatal(a ...any)            { t.fail(fmt.Sprint(a...)) }
func (t *exampleTB) Cleanup(f func())          { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }
func (t *exampleTB) Failed() bool              { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }
func (t *exampleTB) fail(msg string)           { t.mu.Lock(); t.failed = true; t.mu.Unlock(); fmt.Println(msg) }
func (t *exampleTB) TempDir() string {
	d, err := os.MkdirTemp("", "rerun-example-")
	if err != nil {
		t.fail(err.Error())
	}
	t.mu.Lock()
	t.dirs = append(t.dirs, d)
	t.mu.Unlock()
	return d
}

func (t *exampleTB) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	for _, d := range t.dirs {
		os.RemoveAll(d)
	}
}
