package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/wunder/wunder/internal/config"
)

func newMigrateCmd(rf *rootFlags) *cobra.Command {
	var status bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations (serve applies them too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(rf.configPath)
			if err != nil {
				return err
			}
			log := newLogger(cfg)
			store, err := openStore(cmd.Context(), cfg, log, false)
			if err != nil {
				return withCode(exitFailure, err)
			}
			defer store.Close()
			if !status {
				if err := store.Migrate(cmd.Context()); err != nil {
					return withCode(exitFailure, err)
				}
			}
			ms, err := store.MigrationStatus(cmd.Context())
			if err != nil {
				return withCode(exitFailure, err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "MIGRATION\tCOMMENT\tAPPLIED\n")
			for _, m := range ms {
				applied := "pending"
				if !m.AppliedAt.IsZero() {
					applied = m.AppliedAt.Format("2006-01-02 15:04:05")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, m.Comment, applied)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&status, "status", false, "only show which migrations are applied")
	return cmd
}

func newConfigCmd(rf *rootFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect the configuration"}
	var print bool
	validate := &cobra.Command{
		Use:   "validate",
		Short: "Load the configuration (file, override, environment) and report every problem",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(rf.configPath)
			if err != nil {
				return err
			}
			for _, w := range cfg.Warnings() {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			if print {
				b, err := cfg.Redacted().Marshal()
				if err != nil {
					return withCode(exitFailure, err)
				}
				_, _ = cmd.OutOrStdout().Write(b)
				return nil
			}
			fmt.Fprintln(cmd.OutOrStdout(), "configuration is valid")
			return nil
		},
	}
	validate.Flags().BoolVar(&print, "print", false, "print the effective configuration, secrets masked")
	cmd.AddCommand(validate, newConfigDiffCmd(rf))
	return cmd
}

// newConfigDiffCmd is `wunder config diff`: what the override file (the
// admin API's changes) changes against the base file and the environment,
// one line per key path, secrets masked.
func newConfigDiffCmd(rf *rootFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "diff",
		Short: "Show what the override file (written by the admin API) changes against the base configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			without, err := config.Load(config.LoadOptions{Path: rf.configPath, Override: []byte{}})
			if err != nil {
				return withCode(exitConfig, fmt.Errorf("invalid configuration (without the override):\n%w", err))
			}
			with, err := loadConfig(rf.configPath)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if with.Storage.EffectiveBackend() == "postgres" {
				// The admin API keeps its changes in the database here.
				st, err := openStore(cmd.Context(), with, newLogger(with), false)
				if err != nil {
					return withCode(exitFailure, err)
				}
				defer st.Close()
				stored, rev, err := applyStoredConfig(cmd.Context(), with, st, newLogger(with))
				if err != nil {
					return withCode(exitFailure, err)
				}
				changes, err := configDiff(with.Redacted(), stored.Redacted())
				if err != nil {
					return withCode(exitFailure, err)
				}
				fmt.Fprintf(out, "override in the database (revision %d): %d change(s)\n", rev, len(changes))
				for _, c := range changes {
					fmt.Fprintln(out, c)
				}
				return nil
			}
			path := config.OverridePath(with.DataDir)
			body, rev, err := config.ReadOverride(path)
			if err != nil {
				return withCode(exitFailure, err)
			}
			if body == nil {
				fmt.Fprintf(out, "no override file at %s: the configuration is the base file and the environment\n", path)
				return nil
			}
			changes, err := configDiff(without.Redacted(), with.Redacted())
			if err != nil {
				return withCode(exitFailure, err)
			}
			fmt.Fprintf(out, "override %s (revision %d): %d change(s)\n", path, rev, len(changes))
			for _, c := range changes {
				fmt.Fprintln(out, c)
			}
			return nil
		},
	}
}

// configDiff lists the key paths whose values differ between a and b, as
// "  path: old -> new" lines sorted by path; "(unset)" marks a side
// without the key.
func configDiff(a, b *config.Config) ([]string, error) {
	fa, err := flattenConfig(a)
	if err != nil {
		return nil, err
	}
	fb, err := flattenConfig(b)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		va, ina := fa[k]
		vb, inb := fb[k]
		if ina && inb && va == vb {
			continue
		}
		if !ina {
			va = "(unset)"
		}
		if !inb {
			vb = "(unset)"
		}
		out = append(out, fmt.Sprintf("  %s: %s -> %s", k, va, vb))
	}
	return out, nil
}

// flattenConfig maps every leaf of c's YAML form to its key path
// (lists as path[i]); values are YAML-quoted scalars.
func flattenConfig(c *config.Config) (map[string]string, error) {
	b, err := c.Marshal()
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				walk(n.Content[i+1], p)
			}
			if len(n.Content) == 0 {
				out[path] = "{}"
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
			if len(n.Content) == 0 {
				out[path] = "[]"
			}
		default:
			v := n.Value
			if n.Tag == "!!str" {
				v = strconv.Quote(v)
			}
			out[path] = v
		}
	}
	walk(&root, "")
	return out, nil
}
