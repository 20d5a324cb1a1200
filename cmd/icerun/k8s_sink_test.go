package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/icerun/icerun/sink/kafka"
)

var sinkManifestPath = filepath.Join("..", "..", "docs", "k8s", "sink-deployment.yaml")

// probe is a Kubernetes HTTP probe.
type probe struct {
	HTTPGet struct {
		Path string
		Port string
	} `yaml:"httpGet"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

// sinkDoc is the part of the Deployment, PodDisruptionBudget or Secret the
// streaming guide relies on.
type sinkDoc struct {
	Kind     string
	Metadata struct {
		Name        string
		Annotations map[string]string
	}
	Spec struct {
		Replicas       int
		MaxUnavailable int `yaml:"maxUnavailable"`
		Strategy       struct {
			Type          string
			RollingUpdate struct {
				MaxSurge       int `yaml:"maxSurge"`
				MaxUnavailable int `yaml:"maxUnavailable"`
			} `yaml:"rollingUpdate"`
		}
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Args []string
					Env  []struct {
						Name      string
						Value     string
						ValueFrom map[string]any `yaml:"valueFrom"`
					}
					Ports []struct {
						Name          string
						ContainerPort int `yaml:"containerPort"`
					}
					LivenessProbe  *probe `yaml:"livenessProbe"`
					ReadinessProbe *probe `yaml:"readinessProbe"`
					Resources      struct {
						Requests map[string]string
						Limits   map[string]string
					}
				}
			}
		}
	}
}

// TestSinkDeploymentManifest parses docs/k8s/sink-deployment.yaml and
// checks what docs/streaming.md says of it: a Deployment of `icerun sink`
// with flags this command accepts, no more replicas than the topic has
// partitions, a rollout without surge, liveness on /healthz and
// readiness on /readyz of the -http port, a session timeout of seconds
// that the broker accepts, a grace period that covers the final commit,
// and memory requests and limits.
func TestSinkDeploymentManifest(t *testing.T) {
	raw, err := os.ReadFile(sinkManifestPath)
	require.NoError(t, err)
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "streaming.md"))
	require.NoError(t, err)
	docs := map[string]sinkDoc{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var d sinkDoc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		docs[d.Kind] = d
	}
	dep := docs["Deployment"]
	require.Equal(t, "Deployment", dep.Kind)
	partitions, err := strconv.Atoi(dep.Metadata.Annotations["icerun/topic-partitions"])
	require.NoError(t, err, "the topic's partition count is in the icerun/topic-partitions annotation")
	require.Positive(t, dep.Spec.Replicas)
	require.LessOrEqual(t, dep.Spec.Replicas, partitions, "replicas no more than partitions")
	require.Equal(t, "RollingUpdate", dep.Spec.Strategy.Type)
	require.Zero(t, dep.Spec.Strategy.RollingUpdate.MaxSurge, "a surge pod past the partitions would stay unready")
	require.Equal(t, 1, dep.Spec.Strategy.RollingUpdate.MaxUnavailable)
	require.Equal(t, 1, docs["PodDisruptionBudget"].Spec.MaxUnavailable)
	require.NotEmpty(t, docs["Secret"].Metadata.Name)

	pod := dep.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.Equal(t, "sink", c.Args[0])
	// The flags, parsed as icerun sink parses them (-h after them exits 0
	// only when every flag before it parsed).
	code, _, errs := icerun(append(append([]string{}, c.Args...), "-h")...)
	require.Equal(t, 0, code, "the manifest's flags: %s", errs)
	fs := flag.NewFlagSet("sink", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "")
	session := fs.Duration("session-timeout", 0, "")
	interval := fs.Duration("commit-interval", 10*time.Second, "")
	for _, a := range c.Args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if fs.Lookup(name) == nil {
			fs.String(name, "", "")
		}
	}
	require.NoError(t, fs.Parse(c.Args[1:]))

	// Probes on the -http port.
	require.NotEmpty(t, *httpAddr, "-http serves the probes")
	_, port, err := net.SplitHostPort(*httpAddr)
	require.NoError(t, err)
	require.Len(t, c.Ports, 1)
	require.Equal(t, port, strconv.Itoa(c.Ports[0].ContainerPort))
	for path, p := range map[string]*probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		require.NotNil(t, p, path)
		require.Equal(t, path, p.HTTPGet.Path)
		require.Equal(t, c.Ports[0].Name, p.HTTPGet.Port)
		require.Positive(t, p.PeriodSeconds)
	}

	// Session timeout: seconds, within the broker's default bounds
	// (group.min.session.timeout.ms 6 s), and three heartbeats (3 s) fit.
	require.GreaterOrEqual(t, *session, 6*time.Second)
	require.LessOrEqual(t, *session, kafka.DefaultSessionTimeout)
	// The grace period covers the final commit of up to one commit
	// interval's rows, with its retries, well past the session timeout a
	// SIGKILL would cost.
	grace := time.Duration(pod.TerminationGracePeriodSeconds) * time.Second
	require.GreaterOrEqual(t, grace, 3**interval)
	require.Greater(t, grace, *session)

	require.NotEmpty(t, c.Resources.Requests["cpu"])
	require.NotEmpty(t, c.Resources.Requests["memory"])
	require.NotEmpty(t, c.Resources.Limits["memory"])

	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = e.Value != "" || e.ValueFrom != nil
	}
	for _, name := range []string{"ICERUN_KAFKA_BROKERS", "ICERUN_TABLE", "ICERUN_CATALOG", "ICERUN_CONFIG", "ICERUN_RUN_ID", "ICERUN_CODE_VERSION"} {
		require.True(t, env[name], name)
	}

	for _, s := range []string{"docs/k8s/sink-deployment.yaml", "StatefulSet", "terminationGracePeriodSeconds", "maxSurge: 0", "/healthz", "/readyz", "/metrics",
		"-session-timeout", "group.min.session.timeout.ms", "icerun/topic-partitions"} {
		require.Contains(t, string(guide), s, "docs/streaming.md names %s", s)
	}
}
