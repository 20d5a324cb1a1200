package partition_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/partition"
)

func TestCheckFieldName(t *testing.T) {
	for _, name := range []string{"event_date", "_x", "A1", "day_1", "Z9"} {
		if err := partition.CheckFieldName(name); err != nil {
			t.Errorf("CheckFieldName(%q) = %v, want nil", name, err)
		}
	}
	for _, tc := range []struct{ name, suggest string }{
		{"event-date", "event_date"}, {"my field", "my_field"}, {"1day", "_1day"}, {"a/b", "a_b"},
		{"..", "__"}, {"", "_"}, {"café", "caf_"}, {"x=y", "x_y"}, {"../../etc", "______etc"},
	} {
		err := partition.CheckFieldName(tc.name)
		if !errors.Is(err, partition.ErrInvalidFieldName) || !strings.Contains(err.Error(), `"`+tc.suggest+`"`) {
			t.Errorf("CheckFieldName(%q) = %v, want ErrInvalidFieldName suggesting %q", tc.name, err, tc.suggest)
		}
	}
}

func TestCheckFieldNames(t *testing.T) {
	good := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_date", Transform: iceberg.DayTransform{}})
	if err := partition.CheckFieldNames(good); err != nil {
		t.Errorf("CheckFieldNames(%v) = %v, want nil", good, err)
	}
	if err := partition.CheckFieldNames(*iceberg.UnpartitionedSpec); err != nil {
		t.Errorf("CheckFieldNames(unpartitioned) = %v, want nil", err)
	}
	bad := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "a/b", Transform: iceberg.IdentityTransform{}})
	if err := partition.CheckFieldNames(bad); !errors.Is(err, partition.ErrInvalidFieldName) || !strings.Contains(err.Error(), `"a/b"`) {
		t.Errorf("CheckFieldNames(%v) = %v, want ErrInvalidFieldName naming a/b", bad, err)
	}
}
