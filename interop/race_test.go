//go:build interop

package interop

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/table"
)

// TestRaceSparkOverwrite: icerun's ReplacePartitions (eu and us) and
// Spark's dynamic INSERT OVERWRITE (eu and apac) run at the same time on
// one table of the PostgreSQL catalog, round after round
// (ICERUN_INTEROP_RACE_ROUNDS, default 20). eu must end holding exactly one
// writer's rows; us and apac always land.
func TestRaceSparkOverwrite(t *testing.T) {
	e := Get(t)
	target := ""
	for _, tg := range Targets() {
		if strings.HasPrefix(tg, "pg") {
			target = tg
			break
		}
	}
	if target == "" {
		if os.Getenv("CI") == "true" && os.Getenv("ICERUN_INTEROP_TARGETS") != "sqlite" {
			t.Fatal("the race needs the PostgreSQL catalog (scripts/integration pg)")
		}
		t.Skip("the race needs the PostgreSQL catalog: scripts/integration pg -- go test -tags interop ./interop/")
	}
	rounds := 20
	if s := os.Getenv("ICERUN_INTEROP_RACE_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("ICERUN_INTEROP_RACE_ROUNDS=%q", s)
		}
		rounds = n
	}
	c := e.NewCatalog(t, target)
	ctx := context.Background()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "writer", Type: iceberg.PrimitiveTypes.String},
	)
	c.CreateTable(t, "race", sch, iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}}), iceberg.Properties{"format-version": "2"})
	policy := commit.Policy{Attempts: 50, MinBackoff: 10 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, Timeout: 2 * time.Minute}
	w := open(t, c, "race", table.WithRetry(policy))
	e.SparkSQL(t, "SET spark.sql.sources.partitionOverwriteMode=dynamic")
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "region", Type: arrow.BinaryTypes.String}, {Name: "writer", Type: arrow.BinaryTypes.String}}
	rowsOf := func(round int, writer string, regions ...string) []Row {
		var out []Row
		for _, region := range regions {
			for i := range 3 {
				out = append(out, Row{"id": fmt.Sprintf("i:%d", round*1000+i), "region": "s:" + region, "writer": "s:" + writer})
			}
		}
		return out
	}
	var icerunRetries, sparkFailures, icerunWins, sparkWins int
	sparkTime := 2 * time.Second
	for round := range rounds {
		mine, theirs := rowsOf(round, "icerun", "eu", "us"), rowsOf(round, "spark", "eu", "apac")
		rec := batch(fields, len(mine), func(b *array.RecordBuilder, i int) {
			id, _ := strconv.ParseInt(mine[i].Str("id")[2:], 10, 64)
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(mine[i].Str("region"))
			b.Field(2).(*array.StringBuilder).Append("icerun")
		})
		var values []string
		for _, r := range theirs {
			values = append(values, fmt.Sprintf("(CAST(%s AS BIGINT), '%s', 'spark')", r.Str("id")[2:], r.Str("region")))
		}
		delay := time.Duration(rand.Int64N(int64(sparkTime)))
		done := make(chan error, 1)
		var res commit.Result
		go func() {
			time.Sleep(delay)
			var err error
			res, err = w.ReplacePartitions(ctx, reader(t, rec))
			done <- err
		}()
		begin := time.Now()
		_, sparkErr := e.TryDo(SparkSQL(fmt.Sprintf("INSERT OVERWRITE %s SELECT * FROM VALUES %s AS v(id, region, writer)", c.Spark("race"), strings.Join(values, ", "))))
		sparkTime = (sparkTime + time.Since(begin)) / 2
		if err := <-done; err != nil {
			t.Fatalf("round %d: icerun: %v", round, err)
		}
		icerunRetries += res.Attempts - 1
		if sparkErr != nil {
			sparkFailures++
			t.Logf("round %d: Spark's overwrite failed (counted, the partition must then hold icerun's rows): %.300v", round, sparkErr)
		}
		got := e.SparkSQL(t, fmt.Sprintf("SELECT * FROM %s WHERE id >= %d AND id < %d", c.Spark("race"), round*1000, round*1000+1000))
		stats.add(0, 2)
		byRegion := map[string][]Row{}
		for _, r := range got {
			byRegion[r.Str("region")] = append(byRegion[r.Str("region")], r)
		}
		SameRows(t, fmt.Sprintf("round %d: us (icerun's)", round), rowsOf(round, "icerun", "us"), byRegion["us"])
		if sparkErr == nil {
			SameRows(t, fmt.Sprintf("round %d: apac (Spark's)", round), rowsOf(round, "spark", "apac"), byRegion["apac"])
		}
		switch eu := byRegion["eu"]; {
		case Diff(rowsOf(round, "icerun", "eu"), eu) == "":
			icerunWins++
		case sparkErr == nil && Diff(rowsOf(round, "spark", "eu"), eu) == "":
			sparkWins++
		default:
			t.Errorf("round %d: eu holds neither writer's rows exactly: %v", round, eu)
		}
		if t.Failed() {
			break
		}
	}
	// Every round replaced eu: the table holds the last round's eu only.
	if n := e.SparkSQL(t, fmt.Sprintf("SELECT COUNT(*) AS n FROM %s WHERE region = 'eu'", c.Spark("race")))[0].Int("n"); n != 3 {
		t.Errorf("eu holds %d rows after the rounds, want 3 (one writer's, last round)", n)
	}
	t.Logf("RACE %s: %d rounds; eu won by icerun %d, by Spark %d; icerun commit retries %d; Spark overwrites failed %d",
		target, rounds, icerunWins, sparkWins, icerunRetries, sparkFailures)
	fmt.Fprintf(os.Stderr, "interop: RACE %s: %d rounds; eu won by icerun %d, by Spark %d; icerun commit retries %d; Spark overwrites failed %d\n",
		target, rounds, icerunWins, sparkWins, icerunRetries, sparkFailures)
}
