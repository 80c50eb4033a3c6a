package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
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
	cmd.AddCommand(validate)
	return cmd
}
