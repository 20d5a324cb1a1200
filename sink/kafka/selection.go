package kafka

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/sink"
)

// selection is the topics a consumer reads: named ones, or those a
// regular expression matches (their whole name).
type selection struct {
	names []string       // sorted, without duplicates; nil with re
	re    *regexp.Regexp // anchored at both ends; nil with names
}

// newSelection is the selection of cfg's Topic, Topics and TopicRegex: a
// regex excludes names, and one of them is required.
func newSelection(cfg Config) (selection, error) {
	var names []string
	for _, t := range append([]string{cfg.Topic}, cfg.Topics...) {
		if t = strings.TrimSpace(t); t != "" {
			names = append(names, t)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	switch {
	case cfg.TopicRegex != "" && len(names) > 0:
		return selection{}, fmt.Errorf("%w: topics %s and a topic regex: give one of them", ErrConfig, strings.Join(names, ","))
	case cfg.TopicRegex != "":
		re, err := regexp.Compile("^(?:" + cfg.TopicRegex + ")$")
		if err != nil {
			return selection{}, fmt.Errorf("%w: topic regex %q: %v", ErrConfig, cfg.TopicRegex, err)
		}
		return selection{re: re}, nil
	case len(names) == 0:
		return selection{}, fmt.Errorf("%w: brokers, topic, group, decoder and sink are required", ErrConfig)
	}
	return selection{names: names}, nil
}

// has reports whether topic is one of the selection's.
func (s selection) has(topic string) bool {
	if s.re != nil {
		return s.re.MatchString(topic)
	}
	_, ok := slices.BinarySearch(s.names, topic)
	return ok
}

// consume is the argument of kgo.ConsumeTopics: the names, or the regex
// (with kgo.ConsumeRegex).
func (s selection) consume() []string {
	if s.re != nil {
		return []string{s.re.String()}
	}
	return s.names
}

// String is the topics, comma-separated, or the regex, for logs.
func (s selection) String() string {
	if s.re != nil {
		return s.re.String()
	}
	return strings.Join(s.names, ",")
}

// message is what a dead letter keeps of r.
func message(topic string, r *kgo.Record) sink.Message {
	m := sink.Message{Topic: topic, Key: r.Key, Value: r.Value, Time: r.Timestamp}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, sink.Header{Key: h.Key, Value: h.Value})
	}
	return m
}

// Selects reports whether the consumer of c reads topic (one of Topic
// and Topics, or matched by TopicRegex); it fails with [ErrConfig] as
// [Run] does for a selection that is not valid.
func (c Config) Selects(topic string) (bool, error) {
	sel, err := newSelection(c)
	if err != nil {
		return false, err
	}
	return sel.has(topic), nil
}
