package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadOptions says where [Load] looks. The zero value is the normal start:
// the base file from WUNDER_CONFIG_PATH or ./config/wunder.yaml if present,
// the override file under data_dir if present, and the process environment.
type LoadOptions struct {
	// Path of the base YAML file (the --config flag). "" = the
	// WUNDER_CONFIG_PATH variable, else config/wunder.yaml when it exists,
	// else no base file. A path given either way must exist.
	Path string
	// OverridePath of the override file that admin APIs write. "" =
	// <data_dir>/config/wunder.override.yaml when it exists, where data_dir
	// comes from WUNDER_DATA_DIR, else the base file, else the default (a
	// data_dir set in the override file itself does not move it). A path
	// given here must exist.
	OverridePath string
	// Override, when non-nil, is the override's content, used instead of
	// reading the override file: a change the admin API validates before
	// writing it, or an override kept elsewhere. Empty means none.
	Override []byte
	// LookupEnv reads environment variables, for ${VAR} expansion, the
	// WUNDER_* variables and WUNDER_CONFIG_PATH. nil = [os.LookupEnv].
	LookupEnv func(string) (string, bool)
	// ReadFile reads a file. nil = [os.ReadFile].
	ReadFile func(string) ([]byte, error)
}

// Load builds the configuration, in this order (each step beats the ones
// before it):
//
//  1. [Default];
//  2. the base YAML file;
//  3. the override YAML file, merged over the base node by node: mappings
//     merge key by key, scalars and sequences replace;
//  4. ${VAR} and ${VAR:-default} in scalar values of the merged YAML ($$ is
//     a literal $; an unset ${VAR} without default is an error);
//  5. the WUNDER_* environment variables ([EnvVars]);
//  6. derived defaults ([Config.Derive]);
//  7. [Config.Validate].
//
// Unknown keys, values of the wrong type and invalid values are all
// reported together, each with its key path and the file and line (or the
// variable) that set it; see [FieldError]. A YAML syntax error stops the
// load at once. Load never returns both a Config and an error.
func Load(opts LoadOptions) (*Config, error) {
	l, tree, err := readMerged(opts)
	if err != nil {
		return nil, err
	}
	cfg := Default()
	if tree != nil {
		l.expandTree(tree, "")
		l.decode(tree, reflect.ValueOf(cfg).Elem(), "")
	}
	l.applyEnv(cfg)
	cfg.Derive()
	cfg.meta = &meta{origins: l.origins, warnings: l.warnings}
	cfg.validate(&l.probs)
	if err := l.probs.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readMerged reads the base file and the override (steps 2 and 3 of Load)
// and lays one over the other; the tree is nil when there is neither.
func readMerged(opts LoadOptions) (*loader, *yaml.Node, error) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	l := newLoader(opts.LookupEnv)
	basePath, required := opts.Path, true
	if basePath == "" {
		if p, ok := l.env("WUNDER_CONFIG_PATH"); ok {
			basePath = p
		} else {
			basePath, required = baseFile, false
		}
	}
	base, err := l.readTree(opts.ReadFile, basePath, required)
	if err != nil {
		return nil, nil, err
	}
	over, err := l.overrideTree(opts, base)
	if err != nil {
		return nil, nil, err
	}
	return l, merge(base, over), nil
}

// overrideTree reads and parses the override: opts.Override, else the file.
func (l *loader) overrideTree(opts LoadOptions, base *yaml.Node) (*yaml.Node, error) {
	overPath, required := opts.OverridePath, true
	if overPath == "" {
		overPath, required = overrideFile(l.dataDir(base)), false
	}
	if opts.Override != nil {
		if len(bytes.TrimSpace(opts.Override)) == 0 {
			return nil, nil
		}
		return l.parse(overPath, opts.Override)
	}
	return l.readTree(opts.ReadFile, overPath, required)
}

// readTree reads and parses one file. A missing file that is not required
// gives a nil tree.
func (l *loader) readTree(readFile func(string) ([]byte, error), path string, required bool) (*yaml.Node, error) {
	data, err := readFile(path)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	tree, err := l.parse(path, data)
	if err != nil {
		return nil, err
	}
	return tree, nil
}

// dataDir is the data_dir used to find the override file: WUNDER_DATA_DIR,
// else the base file's (expanded), else the default.
func (l *loader) dataDir(base *yaml.Node) string {
	if v, ok := l.env("WUNDER_DATA_DIR"); ok {
		return v
	}
	if base != nil {
		if i := mappingIndex(base, "data_dir"); i >= 0 {
			n := base.Content[i+1]
			if !isNull(n) && n.Kind == yaml.ScalarNode {
				if v, err := expand(n.Value, l.lookupEnv); err == nil && strings.TrimSpace(v) != "" {
					return v
				}
			}
		}
	}
	return Default().DataDir
}
