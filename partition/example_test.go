package partition_test

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/icerun/icerun/partition"
)

func ExampleParseKey() {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_date", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}},
	)
	k, err := partition.ParseKey(spec, sch, "region=eu%2fwest/event_date=2026-07-14")
	if err != nil {
		panic(err)
	}
	fmt.Println(k)

	_, err = partition.ParseKey(spec, sch, "event_date=2026-13-01/region=eu")
	fmt.Println(err)
	// Output:
	// event_date=2026-07-14/region=eu%2Fwest
	// partition: key "event_date=2026-13-01/region=eu": field event_date: bad date "2026-13-01"
}

func ExampleSpec_Values() {
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_month", Transform: iceberg.MonthTransform{}})
	s, err := partition.NewSpec(spec, sch)
	if err != nil {
		panic(err)
	}
	k, _ := s.Parse("event_month=2026-07")
	vals, _ := s.Values(k) // months since 1970-01, as iceberg-go writes them
	fmt.Println(vals)
	k2, _ := s.KeyFromValues(vals)
	fmt.Println(k2 == k)
	fmt.Println(s.Filter(k))
	// Output:
	// map[1000:678]
	// true
	// And(left=GreaterThanEqual(term=Reference(name='ts'), literal=2026-07-01 00:00:00.000000), right=LessThan(term=Reference(name='ts'), literal=2026-08-01 00:00:00.000000))
}
