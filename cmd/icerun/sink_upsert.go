package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/icerun/icerun/sink/decode"
	"github.com/icerun/icerun/table"
)

// sinkUpsertSpec is the change spec of `icerun sink -upsert KEY[,KEY]
// -order COL[,COL] [-delete-when COLUMN=VALUE] [-retention DUR]`, nil
// without -upsert. With -format debezium, -order defaults to the
// _cdc_lsn column and -delete-when to _cdc_op=d (the columns
// decode.DebeziumFormat fills). The columns are checked against the
// table when the sink opens (sink.ErrBadOption, exit 64).
func sinkUpsertSpec(format, upsert, order, deleteWhen string, retention time.Duration) (*table.ChangeSpec, error) {
	if upsert == "" {
		if order != "" || deleteWhen != "" || retention != 0 {
			return nil, fmt.Errorf("%w: -order, -delete-when and -retention need -upsert", errUsage)
		}
		return nil, nil
	}
	if format == "debezium" {
		if order == "" {
			order = decode.DebeziumLSNColumn
		}
		if deleteWhen == "" {
			deleteWhen = decode.DebeziumOpColumn + "=" + decode.DebeziumDelete
		}
	}
	if order == "" {
		return nil, fmt.Errorf("%w: -upsert needs -order COL[,COL] (the version, log sequence number or event time that decides which change of a key is the latest)", errUsage)
	}
	if retention < 0 {
		return nil, fmt.Errorf("%w: -retention %s: must be 0 (tombstones kept for ever) or more", errUsage, retention)
	}
	cs := &table.ChangeSpec{Key: strings.Split(upsert, ","), Order: strings.Split(order, ","), Retention: retention}
	if deleteWhen != "" {
		col, val, ok := strings.Cut(deleteWhen, "=")
		if !ok || col == "" {
			return nil, fmt.Errorf("%w: -delete-when %q: want COLUMN=VALUE, e.g. event_type=deleted", errUsage, deleteWhen)
		}
		cs.Delete = table.DeleteWhen{Column: col, Value: val}
	}
	for _, c := range append(append([]string(nil), cs.Key...), cs.Order...) {
		if c == "" {
			return nil, fmt.Errorf("%w: -upsert %q -order %q: an empty column name", errUsage, upsert, order)
		}
	}
	return cs, nil
}
