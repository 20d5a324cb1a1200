package sink

import "errors"

var (
	// ErrFenced is returned by a commit when another writer committed one
	// of the sink's source partitions since the sink started it: the sink
	// no longer owns it. Nothing was committed; call [Sink.Start] again.
	ErrFenced = errors.New("sink: source partition committed by another writer")
	// ErrKeyCommitted is returned by a commit in keyed mode ([WithKey])
	// when another writer committed one of the batch's keys since the sink
	// read the keys of its table partition: the batch would repeat it.
	// Nothing was committed; call [Sink.Start] again and resume from the
	// positions it returns (the replay drops the duplicate).
	ErrKeyCommitted = errors.New("sink: a key of the batch was committed by another writer")
	// ErrBadInput is returned for records the sink cannot take: offsets
	// that do not match the rows, a missing or badly typed event time or
	// key column.
	ErrBadInput = errors.New("sink: bad input")
	// ErrBadMessage is matched by a [BadMessageError]: a message the
	// caller rejected ([Sink.Reject]) with no dead-letter table to take it.
	ErrBadMessage = errors.New("sink: bad message")
	// ErrBadOption is returned by [Open] for an invalid option.
	ErrBadOption = errors.New("sink: bad option")
	// ErrBadRow is matched by a [RowError]: a row of a batch given to
	// [Sink.Write] that the table cannot hold.
	ErrBadRow = errors.New("sink: a row the table cannot hold")
	// ErrClosed is returned by calls on a closed sink.
	ErrClosed = errors.New("sink: closed")
)
