package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/icerun/icerun/sink/kafka"

	"github.com/icerun/icerun/catalogconfig"
)

// sinkEnvPrefix starts the variable of every flag of `icerun sink`: flag
// -NAME is read from ICERUN_SINK_<NAME in upper case, '-' as '_'> when the
// command line does not give it (-commit-interval: ICERUN_SINK_COMMIT_INTERVAL).
const sinkEnvPrefix = "ICERUN_SINK_"

// sinkFileSection is the section of the config file (~/.icerun.yaml,
// $ICERUN_CONFIG) holding `icerun sink`'s flags by name, below the
// variables.
const sinkFileSection = "sink"

// sinkEnvName is the variable of the sink's flag name.
func sinkEnvName(name string) string {
	return sinkEnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// sinkSettings are the values of the sink's flags the environment and
// the config file give, by flag name: the command line overrides them,
// and they override the flags' defaults (among them the command-wide
// variables of the shared flags, ICERUN_TABLE, ICERUN_LOG_FORMAT...).
type sinkSettings struct {
	values map[string][]string // a repeatable flag (-skip) may have several
	from   map[string]string   // where each came from, for errors
}

// loadSinkSettings reads the ICERUN_SINK_ variables of environ and the
// sink section of the config file (data, read from path; may be empty)
// for the flags of fs. A variable or key naming no flag is an error (a
// typo would otherwise be ignored), except the secrets' variables, which
// have no flag.
func loadSinkSettings(fs *flag.FlagSet, environ []string, path string, data []byte) (sinkSettings, error) {
	s := sinkSettings{values: map[string][]string{}, from: map[string]string{}}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return s, fmt.Errorf("%w: %s: %v", errUsage, path, err)
	}
	if sec, ok := doc[sinkFileSection]; ok && sec != nil {
		m, ok := sec.(map[string]any)
		if !ok {
			return s, fmt.Errorf("%w: %s: %s: want a map of flag names to values", errUsage, path, sinkFileSection)
		}
		for k, v := range m {
			if fs.Lookup(k) == nil {
				return s, fmt.Errorf("%w: %s: %s.%s: icerun sink has no flag -%s", errUsage, path, sinkFileSection, k, k)
			}
			vals, err := yamlScalars(v)
			if err != nil {
				return s, fmt.Errorf("%w: %s: %s.%s: %v", errUsage, path, sinkFileSection, k, err)
			}
			s.values[k], s.from[k] = vals, fmt.Sprintf("%s: %s.%s", path, sinkFileSection, k)
		}
	}
	byEnv := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { byEnv[sinkEnvName(f.Name)] = f.Name })
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, sinkEnvPrefix) || k == envSASLPassword || k == envOAuthToken {
			continue
		}
		name, ok := byEnv[k]
		if !ok {
			return s, fmt.Errorf("%w: variable %s: icerun sink has no flag it names (%s<FLAG>, e.g. %s)", errUsage, k, sinkEnvPrefix, sinkEnvName("commit-interval"))
		}
		vals := []string{v}
		if _, list := fs.Lookup(name).Value.(*stringList); list {
			vals = strings.Split(v, ",")
		}
		s.values[name], s.from[name] = vals, "variable "+k
	}
	return s, nil
}

// yamlScalars is v (a scalar or a list of scalars) as flag values.
func yamlScalars(v any) ([]string, error) {
	switch v := v.(type) {
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			switch e.(type) {
			case map[string]any, []any:
				return nil, errors.New("a list of scalars or a scalar, not a nested value")
			}
			out = append(out, fmt.Sprint(e))
		}
		return out, nil
	case map[string]any:
		return nil, errors.New("a scalar or a list, not a map")
	case nil:
		return []string{""}, nil
	}
	return []string{fmt.Sprint(v)}, nil
}

// apply sets the flags of fs to the settings, before the command line
// is parsed. It sets their values only: the command line still sets
// them again (a repeatable flag adds to them), -h prints the built-in
// defaults, and a table given as the first argument still counts.
// Errors name the flag and where the value came from; the values of
// the sink's flags are no secrets (a secret flag names a file).
func (s sinkSettings) apply(fs *flag.FlagSet) error {
	names := make([]string, 0, len(s.values))
	for k := range s.values {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		f := fs.Lookup(name)
		for _, v := range s.values[name] {
			if err := f.Value.Set(v); err != nil {
				return fmt.Errorf("%w: -%s from %s: %v", errUsage, name, s.from[name], err)
			}
		}
	}
	return nil
}

// sinkConfigFile reads the config file as catalogconfig.Load finds it
// ($ICERUN_CONFIG, else ~/.icerun.yaml when it exists).
func sinkConfigFile() (string, []byte, error) {
	path, explicit := os.Getenv(catalogconfig.EnvConfig), true
	if path == "" {
		explicit = false
		home, err := os.UserHomeDir()
		if err != nil {
			return "", nil, nil
		}
		path = filepath.Join(home, catalogconfig.DefaultFile)
	}
	data, err := os.ReadFile(path)
	if err != nil && (explicit || !errors.Is(err, os.ErrNotExist)) {
		return path, nil, fmt.Errorf("%w: read %s: %w", errUsage, path, err)
	}
	return path, data, nil
}

// sinkDefaults sets the flags of fs from the environment and the config
// file (see sinkSettings).
func sinkDefaults(fs *flag.FlagSet) error {
	path, data, err := sinkConfigFile()
	if err != nil {
		return err
	}
	s, err := loadSinkSettings(fs, os.Environ(), path, data)
	if err != nil {
		return err
	}
	return s.apply(fs)
}

// sinkSkips checks the topics of cfg (a bad -topic-regex is a usage
// error) and parses the -skip values; each must name a topic cfg
// consumes.
func sinkSkips(values []string, cfg kafka.Config) ([]kafka.Offset, error) {
	if _, err := cfg.Selects(""); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	var out []kafka.Offset
	for _, v := range values {
		o, err := kafka.ParseOffset(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%w: -skip: %w", errUsage, err)
		}
		if ok, _ := cfg.Selects(o.Topic); !ok {
			return nil, fmt.Errorf("%w: -skip %s: the sink does not consume topic %q", errUsage, o, o.Topic)
		}
		out = append(out, o)
	}
	return out, nil
}
