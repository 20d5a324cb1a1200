package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// HandOver is what a member of a fleet ([WithHandOver]) wrote in one
// interval and did not commit: its data files (in upsert mode its change
// files, see [ChangeFile]), and for each source partition the range of
// offsets they hold. A [Committer] commits many
// hand-overs in one snapshot, with all their positions. A HandOver is a
// value: safe for concurrent reads, never changed once made.
//
// A hand-over's ranges chain: the first one of a source partition starts
// one past the position the member resumed from, each later one one past
// the end of the one before it. The committer lands a hand-over only when
// every range of it starts exactly one past the position the table holds
// (or one past a range it lands in the same snapshot): this check, made
// on the table state the commit lands on, is what keeps every message in
// the table exactly once, whatever the committers and the control topic
// do (see [Committer]).
type HandOver struct {
	ID         string // unique per hand-over
	Member     string // the member's id
	Generation int32  // the member's group generation when it wrote the files
	TableUUID  string
	SchemaID   int // the schema the files were written for
	SpecID     int // the partition spec the files were written for
	Ranges     []Range
	Files      []iceberg.DataFile
	Mode       Mode         // how the committer lands it: ModeAppend (Files), ModeUpsert or ModeKeyed (Changes)
	Changes    []ChangeFile // upsert and keyed mode: the member's rows
	Rows       int64        // the rows of Files and Changes
}

// Mode is how a fleet lands a member's rows: the mode of its members and
// its committer, which must agree.
type Mode string

const (
	ModeAppend Mode = ""       // data files, appended
	ModeUpsert Mode = "upsert" // change rows, applied as one changelog write ([WithUpsert])
	ModeKeyed  Mode = "keyed"  // rows whose key is new, appended ([WithKey])
)

// modeOf is the mode of a sink configured by cfg.
func modeOf(cfg config) Mode {
	switch {
	case cfg.upsert != nil:
		return ModeUpsert
	case len(cfg.key) > 0:
		return ModeKeyed
	}
	return ModeAppend
}

// Range is the offsets [From, To] of one source partition that a
// hand-over holds rows of (every row of them the hand-over did not drop
// as a redelivery), and MaxEventTime the mark's event time after it
// (math.MinInt64: none tracked).
type Range struct {
	SourcePartition
	From, To     int64
	MaxEventTime int64
}

func (r Range) String() string { return fmt.Sprintf("%s [%d, %d]", r.SourcePartition, r.From, r.To) }

// ErrBadHandOver is matched by the error of [UnmarshalHandOver] for bytes
// that are not a hand-over, and by a [Committer]'s for a hand-over of
// another table.
var ErrBadHandOver = errors.New("sink: bad hand-over")

// handOverJSON is a hand-over's wire form: the data files travel as the
// bytes of an Iceberg manifest (Avro) written with iceberg-go's manifest
// writer, so every field of a data file survives as Iceberg defines it.
type handOverJSON struct {
	V          int          `json:"v"`
	ID         string       `json:"id"`
	Member     string       `json:"member"`
	Generation int32        `json:"generation"`
	TableUUID  string       `json:"table_uuid"`
	SchemaID   int          `json:"schema_id"`
	SpecID     int          `json:"spec_id"`
	Format     int          `json:"format_version"`
	Ranges     []rangeJSON  `json:"ranges"`
	Rows       int64        `json:"rows"`
	Manifest   []byte       `json:"manifest,omitempty"`
	Mode       Mode         `json:"mode,omitempty"`
	Changes    []changeJSON `json:"changes,omitempty"`
}

type changeJSON struct {
	Path string `json:"path"`
	Rows int64  `json:"rows"`
	Size int64  `json:"size"`
}

type rangeJSON struct {
	Source       string `json:"source"`
	Partition    int32  `json:"partition"`
	From         int64  `json:"from"`
	To           int64  `json:"to"`
	MaxEventTime *int64 `json:"max_event_time,omitempty"`
}

// Marshal encodes h for the control topic. tbl is the table the files
// were written to (its spec and schema describe their partition values).
func (h *HandOver) Marshal(tbl *icetable.Table) ([]byte, error) {
	md := tbl.Metadata()
	out := handOverJSON{V: 1, ID: h.ID, Member: h.Member, Generation: h.Generation, TableUUID: h.TableUUID,
		SchemaID: h.SchemaID, SpecID: h.SpecID, Format: md.Version(), Rows: h.Rows, Mode: h.Mode}
	for _, r := range h.Ranges {
		j := rangeJSON{Source: r.Source, Partition: r.Partition, From: r.From, To: r.To}
		if r.MaxEventTime != math.MinInt64 {
			t := r.MaxEventTime
			j.MaxEventTime = &t
		}
		out.Ranges = append(out.Ranges, j)
	}
	for _, c := range h.Changes {
		out.Changes = append(out.Changes, changeJSON(c))
	}
	if len(h.Files) > 0 {
		spec := md.PartitionSpecByID(h.SpecID)
		sch, err := schemaByID(md, h.SchemaID)
		if spec == nil || err != nil {
			return nil, fmt.Errorf("%w: %s: spec %d or schema %d not in the table", ErrBadHandOver, h.ID, h.SpecID, h.SchemaID)
		}
		entries := make([]iceberg.ManifestEntry, len(h.Files))
		for i, f := range h.Files {
			entries[i] = iceberg.NewManifestEntry(iceberg.EntryStatusADDED, nil, nil, nil, f)
		}
		var buf bytes.Buffer
		if _, err := iceberg.WriteManifest("handover:"+h.ID, &buf, md.Version(), *spec, sch, 0, entries); err != nil {
			return nil, fmt.Errorf("sink: hand-over %s: manifest: %w", h.ID, err)
		}
		out.Manifest = buf.Bytes()
	}
	return json.Marshal(out)
}

// UnmarshalHandOver decodes what [HandOver.Marshal] encoded. Bytes that
// are not a hand-over fail with [ErrBadHandOver].
func UnmarshalHandOver(b []byte) (*HandOver, error) {
	var in handOverJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHandOver, err)
	}
	if in.V != 1 || in.ID == "" || len(in.Ranges) == 0 {
		return nil, fmt.Errorf("%w: version %d, id %q, %d ranges", ErrBadHandOver, in.V, in.ID, len(in.Ranges))
	}
	h := &HandOver{ID: in.ID, Member: in.Member, Generation: in.Generation, TableUUID: in.TableUUID,
		SchemaID: in.SchemaID, SpecID: in.SpecID, Rows: in.Rows, Mode: in.Mode}
	for _, j := range in.Ranges {
		r := Range{SourcePartition: SourcePartition{Source: j.Source, Partition: j.Partition}, From: j.From, To: j.To, MaxEventTime: math.MinInt64}
		if j.MaxEventTime != nil {
			r.MaxEventTime = *j.MaxEventTime
		}
		if r.From < 0 || r.To < r.From || r.Source == "" {
			return nil, fmt.Errorf("%w: %s: range %s", ErrBadHandOver, in.ID, r)
		}
		h.Ranges = append(h.Ranges, r)
	}
	if len(in.Manifest) > 0 {
		mf := iceberg.NewManifestFile(in.Format, "handover:"+in.ID, int64(len(in.Manifest)), int32(in.SpecID), 0).Build()
		entries, err := iceberg.ReadManifest(mf, bytes.NewReader(in.Manifest), true)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: manifest: %w", ErrBadHandOver, in.ID, err)
		}
		for _, e := range entries {
			h.Files = append(h.Files, e.DataFile())
		}
	}
	var rows int64
	for _, f := range h.Files {
		rows += f.Count()
	}
	for _, c := range in.Changes {
		if c.Path == "" || c.Rows <= 0 {
			return nil, fmt.Errorf("%w: %s: change file %q of %d rows", ErrBadHandOver, in.ID, c.Path, c.Rows)
		}
		h.Changes = append(h.Changes, ChangeFile(c))
		rows += c.Rows
	}
	if rows != h.Rows {
		return nil, fmt.Errorf("%w: %s: files hold %d rows, the hand-over says %d", ErrBadHandOver, in.ID, rows, h.Rows)
	}
	return h, nil
}

// schemaByID is md's schema of id.
func schemaByID(md icetable.Metadata, id int) (*iceberg.Schema, error) {
	i := slices.IndexFunc(md.Schemas(), func(s *iceberg.Schema) bool { return s.ID == id })
	if i < 0 {
		return nil, fmt.Errorf("schema %d not in the table", id)
	}
	return md.Schemas()[i], nil
}
