package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The Kubernetes manifest and the guide that explains it, from the
// repository root.
var (
	manifestPath = filepath.Join("..", "..", "docs", "k8s", "backfill-indexed-job.yaml")
	guidePath    = filepath.Join("..", "..", "docs", "scale-out.md")
)

// k8sDoc is the part of a Job or Secret the guide relies on.
type k8sDoc struct {
	Kind     string
	Metadata struct{ Name string }
	Spec     struct {
		CompletionMode       string `yaml:"completionMode"`
		Completions          int
		Parallelism          int
		BackoffLimitPerIndex *int `yaml:"backoffLimitPerIndex"`
		Template             struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Args []string
					Env  []struct {
						Name      string
						Value     string
						ValueFrom map[string]any `yaml:"valueFrom"`
					}
					VolumeMounts []struct {
						Name      string
						MountPath string `yaml:"mountPath"`
						ReadOnly  bool   `yaml:"readOnly"`
					} `yaml:"volumeMounts"`
				}
				Volumes []struct {
					Name   string
					Secret *struct {
						SecretName string `yaml:"secretName"`
					}
				}
			}
		}
	}
	StringData map[string]string `yaml:"stringData"`
}

// TestIndexedJobManifest parses docs/k8s/backfill-indexed-job.yaml and
// checks what docs/scale-out.md says of it: an Indexed Job whose pods run
// `icerun backfill -shards-from-env` with flags this command accepts, with
// ICERUN_SHARDS equal to completions, and the catalog configured by
// environment variables and a config file in a mounted Secret.
func TestIndexedJobManifest(t *testing.T) {
	raw, err := os.ReadFile(manifestPath)
	require.NoError(t, err)
	guide, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	docs := map[string]k8sDoc{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var d k8sDoc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		docs[d.Kind] = d
	}
	job, secret := docs["Job"], docs["Secret"]
	require.Equal(t, "Indexed", job.Spec.CompletionMode)
	require.Positive(t, job.Spec.Completions)
	require.Positive(t, job.Spec.Parallelism)
	require.LessOrEqual(t, job.Spec.Parallelism, job.Spec.Completions)
	require.NotNil(t, job.Spec.BackoffLimitPerIndex, "a failed index is retried with the same index")
	pod := job.Spec.Template.Spec
	require.Equal(t, "Never", pod.RestartPolicy, "backoffLimitPerIndex needs restartPolicy Never")
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]

	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = "(from the pod)"
		}
	}
	require.Equal(t, strconv.Itoa(job.Spec.Completions), env[envShardCount], "ICERUN_SHARDS must equal completions")
	require.NotContains(t, env, envShardIndex, "Kubernetes sets JOB_COMPLETION_INDEX itself")
	for _, name := range []string{"ICERUN_TABLE", "ICERUN_CODE_VERSION", "ICERUN_RUN_ID", "ICERUN_CATALOG", "ICERUN_CONFIG"} {
		require.NotEmpty(t, env[name], name)
	}
	catalogEnv := 0
	for name := range env {
		if strings.HasPrefix(name, "ICERUN_CATALOG__"+strings.ToUpper(env["ICERUN_CATALOG"])+"__") {
			catalogEnv++
		}
	}
	require.Positive(t, catalogEnv, "non-secret catalog properties come from ICERUN_CATALOG__<NAME>__<KEY>")

	// The config file is in a Secret mounted read-only where ICERUN_CONFIG points.
	var secretName string
	for _, m := range c.VolumeMounts {
		if m.MountPath != path.Dir(env["ICERUN_CONFIG"]) {
			continue
		}
		require.True(t, m.ReadOnly)
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				secretName = v.Secret.SecretName
			}
		}
	}
	require.NotEmpty(t, secretName, "ICERUN_CONFIG is in a mounted Secret")
	require.Equal(t, secretName, secret.Metadata.Name)
	var file struct{ Catalog map[string]map[string]string }
	require.NoError(t, yaml.Unmarshal([]byte(secret.StringData[path.Base(env["ICERUN_CONFIG"])]), &file))
	require.Contains(t, file.Catalog, strings.ToLower(env["ICERUN_CATALOG"]))
	require.NotEmpty(t, file.Catalog[strings.ToLower(env["ICERUN_CATALOG"])]["uri"])

	// The pods' command: a sharded backfill with flags this command knows
	// (-h after them exits 0 only when every flag before it parsed).
	require.Equal(t, "backfill", c.Args[0])
	require.Contains(t, c.Args, "-shards-from-env")
	require.True(t, slicesHasPrefix(c.Args, "-keys-per-snapshot="), "K keys per snapshot")
	require.Contains(t, c.Args, "-commit-lock", "the pods share the catalog's commit lock")
	code, _, errs := icerun(append(c.Args, "-h")...)
	require.Equal(t, 0, code, "the manifest's flags: %s", errs)

	// The guide names what the manifest sets.
	for _, s := range []string{"completionMode: Indexed", "completions", "parallelism", "backoffLimitPerIndex", envShardIndex, envShardCount,
		"ICERUN_CONFIG", "ICERUN_CATALOG", "ICERUN_CATALOG__PROD__", "ICERUN_CODE_VERSION", secretName, "-shards-from-env", "-keys-per-snapshot", "-commit-lock", "docs/k8s/backfill-indexed-job.yaml"} {
		require.Contains(t, string(guide), s, "docs/scale-out.md names %s", s)
	}
}

func slicesHasPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
