package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/icerun/icerun/recordid"
	"github.com/icerun/icerun/sink"
)

// Event is what a client posts: its name and its own sequence number
// make the event's identity, so a retry carries the same id.
type Event struct {
	Client  string `json:"client"`
	Seq     int64  `json:"seq"`
	Payload string `json:"payload"`
}

// namespace is the service's recordid namespace: part of every id, never
// changed.
var namespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://example.com/icerun/httpingest/events"))

var eventSchema = arrow.NewSchema([]arrow.Field{
	{Name: "client", Type: arrow.BinaryTypes.String},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
	{Name: "payload", Type: arrow.BinaryTypes.String},
}, nil)

// newHandler serves POST /events: a JSON array of [Event]s, answered 200
// once they are committed, 400 for a body that is not such an array,
// 503 when their commit failed (send them again).
func newHandler(in *sink.Ingester) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events", func(w http.ResponseWriter, r *http.Request) {
		var events []Event
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&events); err != nil {
			http.Error(w, "httpingest: body: "+err.Error(), http.StatusBadRequest)
			return
		}
		rec, err := record(events)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer rec.Release()
		// The request's context: a client that hangs up stops waiting,
		// and its events may still commit (its retry is then dropped).
		if err := in.Write(r.Context(), rec); err != nil {
			code := http.StatusServiceUnavailable
			if errors.Is(err, sink.ErrBadInput) || errors.Is(err, sink.ErrBadRow) {
				code = http.StatusBadRequest
			}
			http.Error(w, err.Error(), code)
			return
		}
		fmt.Fprintf(w, "committed %d events\n", len(events))
	})
	return mux
}

// record is events as an Arrow record with their ids in column event_id.
func record(events []Event) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, eventSchema)
	defer b.Release()
	for _, e := range events {
		b.Field(0).(*array.StringBuilder).Append(e.Client)
		b.Field(1).(*array.Int64Builder).Append(e.Seq)
		b.Field(2).(*array.StringBuilder).Append(e.Payload)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	d, err := recordid.New(namespace, "client", "seq") // not safe for concurrent use: one per request
	if err != nil {
		return nil, err
	}
	return d.Append(rec, "event_id")
}
