package kafka

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Offset names one record: an offset of a partition of a topic.
type Offset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// String is TOPIC/PARTITION@OFFSET, which [ParseOffset] reads.
func (o Offset) String() string {
	return o.Topic + "/" + strconv.FormatInt(int64(o.Partition), 10) + "@" + strconv.FormatInt(o.Offset, 10)
}

// ParseOffset parses TOPIC/PARTITION@OFFSET (orders/0@41). It fails with
// [ErrConfig].
func ParseOffset(s string) (Offset, error) {
	slash := strings.LastIndex(s, "/")
	at := strings.LastIndex(s, "@")
	if slash <= 0 || at < slash {
		return Offset{}, fmt.Errorf("%w: %q: want TOPIC/PARTITION@OFFSET", ErrConfig, s)
	}
	p, err := strconv.ParseInt(s[slash+1:at], 10, 32)
	if err != nil || p < 0 {
		return Offset{}, fmt.Errorf("%w: %q: partition %q: want a number of 0 or more", ErrConfig, s, s[slash+1:at])
	}
	off, err := strconv.ParseInt(s[at+1:], 10, 64)
	if err != nil || off < 0 {
		return Offset{}, fmt.Errorf("%w: %q: offset %q: want a number of 0 or more", ErrConfig, s, s[at+1:])
	}
	return Offset{Topic: s[:slash], Partition: int32(p), Offset: off}, nil
}

// writeSkipping is write, except that the records of cfg.Skip are not
// decoded but passed with [sink.Sink.Skip] when the stream reaches them.
func (c *consumer) writeSkipping(ctx context.Context, topic string, part int32, recs []*kgo.Record) error {
	for len(c.cfg.Skip) > 0 && len(recs) > 0 {
		i := c.skipIndex(topic, part, recs)
		if i < 0 {
			break
		}
		if i > 0 {
			if err := c.write(ctx, topic, part, recs[:i]); err != nil {
				return err
			}
		}
		if err := c.s.Skip(ctx, topicPartition{topic, part}.sp(), recs[i].Offset); err != nil {
			return err
		}
		recs = recs[i+1:]
	}
	if len(recs) == 0 {
		return nil
	}
	return c.write(ctx, topic, part, recs)
}

// skipIndex is the index of the first record of recs cfg.Skip names, or -1.
func (c *consumer) skipIndex(topic string, part int32, recs []*kgo.Record) int {
	for i, r := range recs {
		for _, k := range c.cfg.Skip {
			if k.Offset == r.Offset && k.Partition == part && k.Topic == topic {
				return i
			}
		}
	}
	return -1
}
