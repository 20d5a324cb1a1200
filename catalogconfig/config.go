package catalogconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest" // type rest
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/uptrace/bun/driver/pgdriver" // sql.driver "pg"
	"github.com/uptrace/bun/driver/sqliteshim"
	"gopkg.in/yaml.v3"
)

// Environment variables read by [Load].
const (
	EnvConfig = "ICERUN_CONFIG"    // path of the config file (default ~/.icerun.yaml)
	EnvPrefix = "ICERUN_CATALOG__" // ICERUN_CATALOG__<NAME>__<KEY>=value
	// DefaultFile is the config file in the home folder.
	DefaultFile = ".icerun.yaml"
)

// Errors of this package.
var (
	// ErrNoCatalog: the config names no catalog of that name.
	ErrNoCatalog = errors.New("catalogconfig: no such catalog")
	// ErrBadConfig: the config file or a variable cannot be read.
	ErrBadConfig = errors.New("catalogconfig: bad config")
)

// Config is the named catalogs of a config file and the environment.
type Config struct {
	// Catalogs holds each catalog's properties by name.
	Catalogs map[string]iceberg.Properties
	// File is the config file read ("" when none).
	File string
}

// Load reads the config file ($ICERUN_CONFIG, else ~/.icerun.yaml when it
// exists) and the ICERUN_CATALOG__ variables of the process environment.
func Load() (Config, error) {
	path, explicit := os.Getenv(EnvConfig), true
	if path == "" {
		explicit = false
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, DefaultFile)
		}
	}
	var data []byte
	if path != "" {
		var err error
		data, err = os.ReadFile(path)
		switch {
		case err == nil:
		case !explicit && errors.Is(err, os.ErrNotExist):
			path = ""
		default:
			return Config{}, fmt.Errorf("%w: read %s: %w", ErrBadConfig, path, err)
		}
	}
	c, err := Parse(data, os.Environ())
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	c.File = path
	return c, nil
}

// Parse reads a config file's contents (may be empty) and then the
// ICERUN_CATALOG__ entries of environ ("KEY=value" strings), which
// override the file.
func Parse(file []byte, environ []string) (Config, error) {
	c := Config{Catalogs: map[string]iceberg.Properties{}}
	var doc struct {
		Catalog map[string]map[string]any `yaml:"catalog"`
	}
	if err := yaml.Unmarshal(file, &doc); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	for name, props := range doc.Catalog {
		p := iceberg.Properties{}
		if err := flatten(p, "", props); err != nil {
			return Config{}, fmt.Errorf("%w: catalog %q: %v", ErrBadConfig, name, err)
		}
		c.Catalogs[strings.ToLower(name)] = p
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(strings.ToUpper(k), EnvPrefix) {
			continue
		}
		// PyIceberg: lowercase, split at the first two "__", then "__" -> "."
		// and "_" -> "-" in each part.
		parts := strings.SplitN(strings.ToLower(k[len(EnvPrefix):]), "__", 2)
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return Config{}, fmt.Errorf("%w: variable %s: want %s<NAME>__<KEY>", ErrBadConfig, k, EnvPrefix)
		}
		name, key := envPart(parts[0]), envPart(parts[1])
		if c.Catalogs[name] == nil {
			c.Catalogs[name] = iceberg.Properties{}
		}
		c.Catalogs[name][key] = v
	}
	return c, nil
}

func envPart(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "__", "."), "_", "-")
}

// flatten copies the scalars of m into p, joining nested keys with ".".
func flatten(p iceberg.Properties, prefix string, m map[string]any) error {
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			if err := flatten(p, prefix+k+".", v); err != nil {
				return err
			}
		case []any:
			return fmt.Errorf("property %s: a list, want a scalar", prefix+k)
		case nil:
			p[prefix+k] = ""
		default:
			p[prefix+k] = fmt.Sprint(v)
		}
	}
	return nil
}

// Names lists the configured catalogs, sorted.
func (c Config) Names() []string {
	return slices.Sorted(maps.Keys(c.Catalogs))
}

// Properties returns the properties of catalog name as [Config.Open]
// passes them to iceberg-go (see the package doc for what it adds).
func (c Config) Properties(name string) (iceberg.Properties, error) {
	p, ok := c.Catalogs[strings.ToLower(name)]
	if !ok {
		where := "no config file"
		if c.File != "" {
			where = c.File
		}
		return nil, fmt.Errorf("%w: %q (configured: %s; %s and %s<NAME>__<KEY> variables)", ErrNoCatalog, name, strings.Join(c.Names(), ", "), where, EnvPrefix)
	}
	p = maps.Clone(p)
	uri := p["uri"]
	scheme, _, _ := strings.Cut(uri, ":")
	scheme = strings.ToLower(scheme)
	pg := scheme == "postgres" || scheme == "postgresql"
	if p["type"] == "" && pg {
		p["type"] = "sql"
	}
	if strings.EqualFold(p["type"], "sql") {
		if p[sqlcat.DriverKey] == "" {
			switch {
			case pg:
				p[sqlcat.DriverKey] = "pg"
			case scheme == "file" || scheme == "sqlite":
				p[sqlcat.DriverKey] = sqliteshim.ShimName
			}
		}
		if p[sqlcat.DialectKey] == "" {
			switch p[sqlcat.DriverKey] {
			case "pg", "postgres", "pgx":
				p[sqlcat.DialectKey] = string(sqlcat.Postgres)
			case sqliteshim.ShimName, "sqlite", "sqlite3":
				p[sqlcat.DialectKey] = string(sqlcat.SQLite)
			}
		}
		if _, ok := p["init_catalog_tables"]; !ok {
			p["init_catalog_tables"] = "true"
		}
	}
	return p, nil
}

// Open loads the config ([Load]) and opens catalog name.
func Open(ctx context.Context, name string) (catalog.Catalog, error) {
	c, err := Load()
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, name)
}

// Open opens catalog name with iceberg-go's catalog.Load. Type "local"
// opens [OpenLocal] in the warehouse folder (default [DefaultWarehouse]).
// Errors name the catalog and its type, and hold no secret.
func (c Config) Open(ctx context.Context, name string) (catalog.Catalog, error) {
	p, err := c.Properties(name)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(p["type"], "local") {
		dir := strings.TrimPrefix(p["warehouse"], "file://")
		if dir == "" {
			dir = DefaultWarehouse
		}
		return OpenLocal(ctx, dir)
	}
	if p["type"] == "" && !strings.Contains(p["uri"], "://") {
		return nil, fmt.Errorf("%w: catalog %q has no type (sql, rest, glue, local) and no uri", ErrBadConfig, name)
	}
	cat, err := catalog.Load(ctx, strings.ToLower(name), p)
	if err != nil {
		return nil, &openError{msg: fmt.Sprintf("catalogconfig: open catalog %q (type %s): %s", name, p["type"], Redact(p, err.Error())), err: err}
	}
	return cat, nil
}

// openError carries a redacted message; Unwrap keeps errors.Is working.
type openError struct {
	msg string
	err error
}

func (e *openError) Error() string { return e.msg }
func (e *openError) Unwrap() error { return e.err }

// secretWords mark property keys whose values are secrets.
var secretWords = []string{"secret", "password", "token", "credential", "session", "key-id", "private"}

// IsSecret reports whether property key holds a secret.
func IsSecret(key string) bool {
	k := strings.ToLower(key)
	return slices.ContainsFunc(secretWords, func(w string) bool { return strings.Contains(k, w) })
}

// Redact replaces in s every secret of props (see [IsSecret]) and the
// password of every uri property by "***".
func Redact(props iceberg.Properties, s string) string {
	var secrets []string
	for k, v := range props {
		if v == "" {
			continue
		}
		if IsSecret(k) {
			secrets = append(secrets, v)
			if id, sec, ok := strings.Cut(v, ":"); ok && id != "" && sec != "" { // credential "id:secret"
				secrets = append(secrets, sec)
			}
		}
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "" {
				secrets = append(secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
			}
		}
	}
	// Longest first, so that a secret holding another is replaced whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range secrets {
		if len(sec) >= 3 {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return s
}

// Describe is props as one line for output, secrets replaced by "***".
func Describe(props iceberg.Properties) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(props)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := props[k]
		if IsSecret(k) && v != "" {
			v = "***"
		}
		b.WriteString(k + "=" + Redact(props, v))
	}
	return b.String()
}
