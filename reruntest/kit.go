package reruntest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal"
)

// Config describes the pipeline under test.
type Config struct {
	// Setup creates the pipeline's tables (and whatever else it needs) in
	// a fresh catalog. Required.
	Setup func(ctx context.Context, cat catalog.Catalog) error
	// Run is one run of the pipeline, reaching every table through cat.
	// Check calls it from several goroutines at once, each with a catalog
	// of its own. Required.
	Run func(ctx context.Context, cat catalog.Catalog) error
	// Tables are the tables compared with the clean run. Required.
	Tables []Table
	// Faults are the failures injected. Default [AllFaults].
	Faults []Fault
	// Ks are the operation counts at which a fault is injected: K=0 fails
	// the first operation of its kind in the run. The sweep of a fault
	// stops at the first K the run does not reach. Default: 0, 1, 2, ...,
	// up to 63.
	Ks []int
}

// Table is one table compared by [Check].
type Table struct {
	Ident icetable.Identifier
	// Key, when set, names columns no two rows may share (the upsert key).
	Key []string
}

// DefaultMaxK bounds the default sweep of K.
const DefaultMaxK = 64

// Check runs the pipeline of cfg cleanly, then for every fault and K with
// an injected failure followed by a rerun, and reports through t the
// first scenario whose final tables differ from the clean run's (see the
// package documentation). The faults are checked concurrently; t is only
// used for TempDir, Cleanup, Logf and, from the calling goroutine, Errorf
// and Fatalf.
func Check(t testing.TB, cfg Config) {
	t.Helper()
	if cfg.Setup == nil || cfg.Run == nil || len(cfg.Tables) == 0 {
		t.Fatalf("reruntest: Config needs Setup, Run and Tables")
		return
	}
	faults := cfg.Faults
	if len(faults) == 0 {
		faults = AllFaults
	}
	ks := cfg.Ks
	if len(ks) == 0 {
		for k := range DefaultMaxK {
			ks = append(ks, k)
		}
	}
	ctx := context.Background()
	want, err := cleanRun(ctx, t, cfg)
	if err != nil {
		t.Errorf("reruntest: clean run: %v", err)
		return
	}
	// One chain per (prior runs, fault): K grows until the fault no longer
	// fires. Chains run at once, on catalogs of their own.
	type chain struct {
		prior int
		fault Fault
		err   error
	}
	var chains []*chain
	for _, prior := range []int{1, 0} {
		for _, f := range faults {
			chains = append(chains, &chain{prior: prior, fault: f})
		}
	}
	var wg sync.WaitGroup
	for _, c := range chains {
		wg.Go(func() {
			for _, k := range ks {
				sc := scenario{fault: c.fault, k: k, prior: c.prior}
				fired, err := sc.run(ctx, t, cfg, want)
				if err != nil {
					c.err = fmt.Errorf("%s: %w", sc, err)
					return
				}
				if !fired {
					return // the run has fewer operations than k+1
				}
			}
		})
	}
	wg.Wait()
	for _, c := range chains {
		if c.err != nil {
			t.Errorf("reruntest: %v", c.err)
			return
		}
	}
}

// cleanRun runs the pipeline once on a fresh catalog and scans the tables.
func cleanRun(ctx context.Context, t testing.TB, cfg Config) ([]canonical, error) {
	cat, err := fresh(ctx, t, cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.Run(ctx, cat); err != nil {
		return nil, err
	}
	return scanAll(ctx, cat, cfg.Tables)
}

func scanAll(ctx context.Context, cat catalog.Catalog, tables []Table) ([]canonical, error) {
	out := make([]canonical, len(tables))
	for i, tb := range tables {
		c, err := scan(ctx, cat, tb.Ident)
		if err != nil {
			return nil, err
		}
		if len(tb.Key) > 0 {
			dup, err := duplicateKey(c, tb.Key)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", name(tb.Ident), err)
			}
			if dup != "" {
				return nil, fmt.Errorf("table %s: two rows with key (%s)", name(tb.Ident), dup)
			}
		}
		out[i] = c
	}
	return out, nil
}

// fresh opens an embedded catalog in a new temporary folder, wrapped for
// fault injection, and runs Setup in it.
func fresh(ctx context.Context, t testing.TB, cfg Config) (*faultCatalog, error) {
	raw, err := internal.OpenSQLite(ctx, t.TempDir())
	if err != nil {
		return nil, err
	}
	if c, ok := raw.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	cat := &faultCatalog{Catalog: raw, in: &injector{}}
	if err := cfg.Setup(ctx, cat); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	return cat, nil
}

// scenario is one crash point: prior clean runs, then a run failing at the
// k-th operation of fault, then a rerun.
type scenario struct {
	fault Fault
	k     int
	prior int
}

func (s scenario) String() string {
	when := "rerun"
	if s.prior == 0 {
		when = "first run"
	}
	return fmt.Sprintf("%s failing at operation %d of the %s", s.fault, s.k, when)
}

// run plays the scenario on a fresh catalog and compares the result with
// want. fired reports whether the fault was reached.
func (s scenario) run(ctx context.Context, t testing.TB, cfg Config, want []canonical) (fired bool, err error) {
	cat, err := fresh(ctx, t, cfg)
	if err != nil {
		return false, err
	}
	for range s.prior {
		if err := cfg.Run(ctx, cat); err != nil {
			return false, fmt.Errorf("clean run before the failure: %w", err)
		}
	}
	cat.in.arm(s.fault, s.k)
	failed := cfg.Run(ctx, cat)
	fired = cat.in.disarm()
	if failed != nil && !fired {
		return fired, fmt.Errorf("run failed without an injected fault: %w", failed)
	}
	if failed != nil && !errors.Is(failed, ErrInjected) {
		// The pipeline may wrap or replace the error; only note it.
		t.Logf("reruntest: %s: run failed with %v", s, failed)
	}
	if err := cfg.Run(ctx, cat); err != nil {
		return fired, fmt.Errorf("rerun after the failure: %w", err)
	}
	got, err := scanAll(ctx, cat, cfg.Tables)
	if err != nil {
		return fired, err
	}
	for i, tb := range cfg.Tables {
		if d := diff(want[i], got[i]); d != "" {
			return fired, fmt.Errorf("table %s after the rerun differs from one clean run: %s", name(tb.Ident), d)
		}
	}
	return fired, nil
}
