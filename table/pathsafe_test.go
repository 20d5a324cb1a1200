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
	t.Parallel()
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

func TestDataPathsReal(t *testing.T) {
	t.Parallel()
	p := dataPaths{prefix: "file:///w/db/t/data/"}
	long := "s=" + strings.Repeat("@C3@A9", 60)
	cases := []struct{ loc, want string }{
		{"file:///w/db/t/data/s=a/x.parquet", "file:///w/db/t/data/s=a/x.parquet"},
		{"file:///w/db/t/data/s=caf%C3%A9/d=1e%2B300/x.parquet", "file:///w/db/t/data/s=caf@C3@A9/d=1e@2B300/x.parquet"},
		{"file:///w/db/t/data/s=a+b%2Fc/0101/1100/x.parquet", "file:///w/db/t/data/s=a+b@2Fc/0101/1100/x.parquet"},
		{"file:///w/db/t/data/" + strings.ReplaceAll(long, "@", "%") + "/x.parquet", ""},
		{"file:///w/other%20place/x.parquet", "file:///w/other%20place/x.parquet"},
	}
	for _, tc := range cases {
		got := p.real(tc.loc)
		if strings.Contains(got[len("file:///w/db/t/data/"):], "%") && strings.HasPrefix(tc.loc, p.prefix) {
			t.Errorf("real(%s) = %s: has a %%", tc.loc, got)
		}
		if tc.want == "" {
			seg := strings.Split(strings.TrimPrefix(got, p.prefix), "/")[0]
			if len(seg) != MaxPathSegment || !strings.HasPrefix(seg, long[:100]) {
				t.Errorf("real(%s): folder %s (%d bytes), want %d bytes starting with the spelled name", tc.loc, seg, len(seg), MaxPathSegment)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("real(%s) = %s, want %s", tc.loc, got, tc.want)
		}
	}
}
