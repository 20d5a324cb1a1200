package table

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/partition"
)

func TestCheckPathSafe(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "label", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "n", Type: iceberg.PrimitiveTypes.Int64},
	)
	spec, err := partition.NewSpec(iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "label", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "n", Transform: iceberg.IdentityTransform{}},
	), sch)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key    string
		unsafe bool
	}{
		{"label=a/n=1", false},
		{"label=../n=1", false},
		{"label=%2Fetc%2Fpasswd/n=1", false},
		{"label=..%2Fx/n=1", false},
		{"label=null/n=1", false},
		{"label=/n=1", false},
		{"label=..%2F../n=1", true},
		{"label=a%2F..%2F..%2Fb/n=1", true},
		{"label=.%2F./n=1", true},
		{"label=%2F..%2Fx/n=1", true},
		{"label=..%5C..%5Cx/n=1", true},
		{"label=a%00b/n=1", true},
	}
	for _, tc := range cases {
		k, err := spec.Parse(tc.key)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.key, err)
		}
		err = checkPathSafe(spec, k)
		if got := errors.Is(err, ErrUnsafePartitionValue); got != tc.unsafe {
			t.Errorf("checkPathSafe(%s) = %v, want unsafe %v", tc.key, err, tc.unsafe)
		}
	}
}
