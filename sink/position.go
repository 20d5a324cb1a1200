package sink

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// SummaryPositions is the snapshot summary property in which every sink
// commit records the positions of all the source partitions the table
// holds rows of (its own merged into those of the commits before it), so
// the newest sink snapshot is enough to know them. Its value is JSON:
//
//	{"kafka:orders": {"0": {"offset": 41, "max_event_time": 1784000000000000}}}
//
// max_event_time (microseconds since the epoch) is there only when the sink
// tracks event time.
const SummaryPositions = "icerun.sink.positions"

// PropertyPositions is the table property every sink commit sets, in the
// same commit, to the value of [SummaryPositions]. It stands in only for
// sink snapshots expired from main's ancestry: it is read when no snapshot
// on main's ancestry records the positions and the ancestry is cut short
// by an expired parent, never when the ancestry reaches its first
// snapshot (it is all there and records none: main was rolled back past
// every sink commit) and never for a commit that is no longer on main
// (see [PropertyPositionsSequence]). So the summary follows main (a
// rollback moves the positions back with the rows) and the property
// survives expiry.
const PropertyPositions = "icerun.sink.positions"

// PropertyPositionsSequence is the table property every sink commit of a
// format v2 or v3 table sets beside [PropertyPositions], in the same
// commit: the sequence number of the snapshot that commit adds. The
// property stands in for the expired part of main's ancestry only when
// that snapshot is gone and its sequence number is below that of the
// oldest snapshot left on the ancestry (it was one of the expired
// ancestors); a snapshot still in the table, or a newer one, is off main:
// main was rolled back past it, and the positions of the expired
// ancestors are unknown. Format v1 has no sequence numbers: a v1 table's
// sink commits set no such property, and a property without it is read
// whenever the ancestry is cut short.
const PropertyPositionsSequence = "icerun.sink.positions-sequence"

// SourcePartition names one ordered stream of a source: for Kafka, a topic
// ("kafka:orders") and a partition of it.
type SourcePartition struct {
	Source    string
	Partition int32
}

func (sp SourcePartition) String() string {
	return sp.Source + "/" + strconv.FormatInt(int64(sp.Partition), 10)
}

// Mark is what the table holds of one source partition: the highest offset
// of its rows, and the maximum event time among them.
type Mark struct {
	Offset int64
	// MaxEventTime is in microseconds since the epoch; math.MinInt64 when
	// no event time was seen.
	MaxEventTime int64
}

// none is the mark of a source partition the table holds nothing of.
var none = Mark{Offset: -1, MaxEventTime: math.MinInt64}

type markJSON struct {
	Offset       *int64 `json:"offset"`
	MaxEventTime *int64 `json:"max_event_time,omitempty"`
}

// marks are the positions of a table, by source partition.
type marks map[SourcePartition]Mark

func (m marks) get(sp SourcePartition) Mark {
	if v, ok := m[sp]; ok {
		return v
	}
	return none
}

func (m marks) encode() (string, error) {
	out := map[string]map[string]markJSON{}
	for sp, v := range m {
		if out[sp.Source] == nil {
			out[sp.Source] = map[string]markJSON{}
		}
		off := v.Offset
		j := markJSON{Offset: &off}
		if v.MaxEventTime != math.MinInt64 {
			t := v.MaxEventTime
			j.MaxEventTime = &t
		}
		out[sp.Source][strconv.FormatInt(int64(sp.Partition), 10)] = j
	}
	b, err := json.Marshal(out) // map keys sorted: the same marks encode the same
	return string(b), err
}

// after is the sink's marks m after a commit of pending that recorded
// merged (the table's marks with pending's): pending's source partitions
// at their new marks, every other one the sink holds a mark of at that
// mark (see [Sink.refresh]: the table's may have moved, and must fence),
// and those it holds none of at the table's.
func (m marks) after(merged, pending marks) marks {
	out := maps.Clone(merged)
	for sp, old := range m {
		if _, own := pending[sp]; !own {
			out[sp] = old
		}
	}
	return out
}

// decodeMarks decodes the positions s records. A value that is not the
// JSON object encode writes (a source or partition without a mark, a mark
// without an integer offset of -1 or more, a partition that is not an
// int32 in canonical form: "00" or "+0" beside "0" would be one partition
// twice) fails with [commit.ErrUnsupported]: another writer or a hand edit
// made it, and the sink cannot tell what the table holds.
func decodeMarks(s string) (marks, error) {
	var in map[string]map[string]*markJSON
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, fmt.Errorf("sink: %w: %s: %w", commit.ErrUnsupported, SummaryPositions, err)
	}
	if in == nil {
		return nil, fmt.Errorf("sink: %w: %s is null", commit.ErrUnsupported, SummaryPositions)
	}
	out := marks{}
	for src, parts := range in {
		if parts == nil {
			return nil, fmt.Errorf("sink: %w: %s: source %q has no partitions", commit.ErrUnsupported, SummaryPositions, src)
		}
		for p, j := range parts {
			n, err := strconv.ParseInt(p, 10, 32)
			if err == nil && strconv.FormatInt(n, 10) != p {
				err = fmt.Errorf("not in canonical form") // "00" and "0" would be one partition, "+1" and "1" too
			}
			if err != nil {
				return nil, fmt.Errorf("sink: %w: %s: partition %q of %q: %w", commit.ErrUnsupported, SummaryPositions, p, src, err)
			}
			if j == nil || j.Offset == nil || *j.Offset < -1 {
				return nil, fmt.Errorf("sink: %w: %s: partition %q of %q: no offset of -1 or more", commit.ErrUnsupported, SummaryPositions, p, src)
			}
			m := Mark{Offset: *j.Offset, MaxEventTime: math.MinInt64}
			if j.MaxEventTime != nil {
				m.MaxEventTime = *j.MaxEventTime
			}
			out[SourcePartition{Source: src, Partition: int32(n)}] = m
		}
	}
	return out, nil
}

// tableMarks reads the positions tbl holds: those of the newest snapshot on
// main's ancestry that records them (other writers' snapshots, such as a
// replace or a compaction by another tool, do not move them); when none
// does, none if the ancestry is complete, else (the older ancestors were
// expired) those of [PropertyPositions], when it stands in for them (see
// [PropertyPositionsSequence]). A property that was set by a commit no
// longer on main, over an ancestry cut short, fails with
// [commit.ErrUnsupported]: the positions of the expired ancestors are
// gone with them, and resuming from any guess would drop or repeat rows.
func tableMarks(tbl *icetable.Table) (marks, error) {
	md := tbl.Metadata()
	oldest := md.CurrentSnapshot()
	for s := oldest; s != nil; s = md.SnapshotByID(*s.ParentSnapshotID) {
		if s.Summary != nil {
			if v, ok := s.Summary.Properties[SummaryPositions]; ok {
				return decodeMarks(v)
			}
		}
		oldest = s
		if s.ParentSnapshotID == nil {
			return marks{}, nil // the whole ancestry is here: it holds no sink rows
		}
	}
	if oldest == nil {
		return marks{}, nil // no snapshot: no rows
	}
	v, ok := md.Properties()[PropertyPositions]
	if !ok {
		return marks{}, nil
	}
	if err := standsIn(md, oldest); err != nil {
		return nil, err
	}
	return decodeMarks(v)
}

// standsIn reports (nil) whether md's [PropertyPositions] was set by a
// snapshot expired from main's ancestry, whose oldest snapshot left is
// oldest (its parent was expired).
func standsIn(md icetable.Metadata, oldest *icetable.Snapshot) error {
	raw, ok := md.Properties()[PropertyPositionsSequence]
	if !ok || md.Version() < 2 {
		return nil // set before the sequence was recorded, or format v1: the cut ancestry is all there is to go by
	}
	seq, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || seq < 1 {
		return fmt.Errorf("sink: %w: %s %q: not a sequence number", commit.ErrUnsupported, PropertyPositionsSequence, raw)
	}
	if seq < oldest.SequenceNumber && !slices.ContainsFunc(md.Snapshots(), func(s icetable.Snapshot) bool { return s.SequenceNumber == seq }) {
		return nil
	}
	return fmt.Errorf("sink: %w: %s was set by the snapshot of sequence number %d, which is not on main's ancestry "+
		"(main was rolled back past it), and main's snapshots before %d (sequence number %d) were expired: "+
		"the positions of the rows they hold are unknown; set %s to them and remove %s",
		commit.ErrUnsupported, PropertyPositions, seq, oldest.SnapshotID, oldest.SequenceNumber, PropertyPositions, PropertyPositionsSequence)
}

// positionProps are the table properties a sink commit on base sets, in
// the same commit: the positions v it records ([PropertyPositions]) and,
// on format v2 and v3, the sequence number of the snapshot it adds
// ([PropertyPositionsSequence]).
func positionProps(base icetable.Metadata, v string) iceberg.Properties {
	props := iceberg.Properties{PropertyPositions: v}
	if base.Version() >= 2 {
		props[PropertyPositionsSequence] = strconv.FormatInt(base.LastSequenceNumber()+1, 10)
	}
	return props
}

// Positions reads the committed positions of tbl: for every source
// partition, the highest offset the table holds. A consumer resumes each
// one at its offset plus one.
func Positions(tbl *icetable.Table) (map[SourcePartition]int64, error) {
	m, err := tableMarks(tbl)
	if err != nil {
		return nil, err
	}
	out := make(map[SourcePartition]int64, len(m))
	for sp, v := range m {
		out[sp] = v.Offset
	}
	return out, nil
}
