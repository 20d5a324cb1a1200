package enginestest

import (
	"errors"
	"reflect"
	"testing"
)

func TestStartWithoutEngines(t *testing.T) {
	for _, env := range []map[string]string{
		{"ICERUN_PYTHON": "", "ICERUN_SPARK_JARS": ""},
		{"ICERUN_PYTHON": "/usr/bin/python3", "ICERUN_SPARK_JARS": ""},
		{"ICERUN_PYTHON": "", "ICERUN_SPARK_JARS": "a.jar"},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		if e, err := start(); !errors.Is(err, ErrNoEngines) {
			t.Errorf("start() with %v = %v, %v; want ErrNoEngines", env, e, err)
		}
	}
}

func TestResponseNamed(t *testing.T) {
	r := Response{Columns: []string{"id", "name"}, Rows: [][]any{{"i:1", "s:a"}, {"i:2", "null"}}}
	got := r.Named()
	want := []Row{{"id": "i:1", "name": "s:a"}, {"id": "i:2", "name": "null"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Named() = %v, want %v", got, want)
	}
	if got[0].Int("id") != 1 || got[0].Str("name") != "a" || got[1].Str("name") != "null" {
		t.Errorf("Int, Str of %v: %d %q %q", got, got[0].Int("id"), got[0].Str("name"), got[1].Str("name"))
	}
}
