package table

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
)

func TestCheckPathSafe(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "label", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "n", Type: iceberg.PrimitiveTypes.Int64},
	)
	ps := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "label", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "n", Transform: iceberg.IdentityTransform{}},
	)
	md, err := icetable.NewMetadata(sch, &ps, icetable.UnsortedSortOrder, "file:///tmp/t", nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl := icetable.New(icetable.Identifier{"db", "t"}, md, "file:///tmp/t/metadata/00000-x.metadata.json", nil, nil)
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	// "label=" and 249 bytes is the longest folder name allowed, counted
	// as the file system stores it: unescaped.
	long := strings.Repeat("k", MaxPathSegment-len("label="))
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
		{"label=" + long + "/n=1", false},
		{"label=" + long + "k/n=1", true},
		{"label=" + long[1:] + "%C3%A9/n=1", true},
		{"label=" + long[2:] + "%C3%A9/n=1", false},
		{"label=" + strings.Repeat("%C3%A9", 124) + "/n=1", false},
		{"label=" + strings.Repeat("%C3%A9", 125) + "/n=1", true},
	}
	for _, tc := range cases {
		k, err := spec.Parse(tc.key)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.key, err)
		}
		err = checkPathSafe(tbl, spec, k)
		if got := errors.Is(err, ErrUnsafePartitionValue); got != tc.unsafe {
			t.Errorf("checkPathSafe(%s) = %v, want unsafe %v", tc.key, err, tc.unsafe)
		}
	}
}
