package backfill

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

// concat reads the rows of the jobs of several keys, one after the other,
// calling each job when the previous reader is exhausted. It counts the
// rows. With tbl set (a group of several keys), every row is checked
// against the key of the job that produced it, so that a job's row of
// another key of the group fails with partition.ErrRowOutside, as it would
// for a group of one. Not safe for concurrent use.
type concat struct {
	ctx  context.Context
	job  Job
	keys []partition.Key
	tbl  *icetable.Table // nil: no per-job check
	next int
	cur  array.RecordReader
	sc   *arrow.Schema
	rows int64
	err  error

	ids       map[string]string // input identities by key text (WithInputIdentity)
	readerIDs map[string]string // those the jobs' readers gave (table.InputIdentifier)

	res     *schema.Resolution
	spec    *partition.Spec
	matcher *partition.Matcher // of the current job's key
}

// JobError is the failure of the rows of one key's job in a group of
// several keys (WithKeysPerSnapshot): Key names the job whose reader
// failed or gave a row outside Key. The reader stopped at the batch that
// failed, so a caller can name the row's place in its input.
type JobError struct {
	Key partition.Key
	Err error
}

func (e *JobError) Error() string { return fmt.Sprintf("backfill: job %s: %v", e.Key, e.Err) }
func (e *JobError) Unwrap() error { return e.Err }

// open calls the first job, so that Schema is known.
func (c *concat) open() error {
	if err := c.advance(); err != nil {
		return err
	}
	c.sc = c.cur.Schema()
	return nil
}

func (c *concat) advance() error {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	k := c.keys[c.next]
	c.next++
	rdr, err := c.job(c.ctx, k)
	if err == nil && rdr == nil {
		err = fmt.Errorf("nil reader")
	}
	if err != nil {
		return fmt.Errorf("backfill: job %s: %w", k, err)
	}
	if c.sc != nil && !c.sc.Equal(rdr.Schema()) {
		rdr.Release()
		return fmt.Errorf("backfill: job %s: schema differs from the job of %s", k, c.keys[0])
	}
	c.cur = rdr
	if id, ok := rdr.(table.InputIdentifier); ok {
		if c.readerIDs == nil {
			c.readerIDs = map[string]string{}
		}
		c.readerIDs[k.String()] = id.InputIdentity(k.String())
	}
	if c.tbl == nil {
		return nil
	}
	if c.res == nil {
		if c.res, err = schema.Resolve(rdr.Schema(), c.tbl.Schema(), c.tbl.NameMapping(), schema.IgnoreUnknown); err != nil {
			return fmt.Errorf("backfill: job %s: %w", k, err)
		}
		if c.spec, err = partition.NewSpec(c.tbl.Spec(), c.tbl.Schema()); err != nil {
			return fmt.Errorf("backfill: job %s: %w", k, err)
		}
	}
	if c.matcher, err = c.spec.Matcher(k, c.res.Schema()); err != nil {
		return fmt.Errorf("backfill: job %s: %w", k, err)
	}
	return nil
}

// check fails when a row of rec is outside the current job's key.
func (c *concat) check(rec arrow.RecordBatch) error {
	if c.matcher == nil {
		return nil
	}
	out, err := c.res.Apply(c.ctx, rec)
	if err != nil {
		return err
	}
	defer out.Release()
	return c.matcher.Check(out)
}

func (c *concat) Retain()                        {}
func (c *concat) Schema() *arrow.Schema          { return c.sc }
func (c *concat) Record() arrow.RecordBatch      { return c.cur.RecordBatch() }
func (c *concat) RecordBatch() arrow.RecordBatch { return c.cur.RecordBatch() }
func (c *concat) Err() error                     { return c.err }

func (c *concat) Next() bool {
	for c.err == nil {
		if c.cur.Next() {
			if err := c.check(c.cur.RecordBatch()); err != nil {
				c.err = &JobError{Key: c.keys[c.next-1], Err: err}
				return false
			}
			c.rows += c.cur.RecordBatch().NumRows()
			return true
		}
		if err := c.cur.Err(); err != nil {
			c.err = &JobError{Key: c.keys[c.next-1], Err: err}
			return false
		}
		if c.next == len(c.keys) {
			return false
		}
		c.err = c.advance()
	}
	return false
}

// Release releases the current job's reader.
func (c *concat) Release() {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
}
