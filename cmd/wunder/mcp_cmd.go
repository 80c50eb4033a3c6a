package main

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// newMCPCmd is `wunder mcp`, with `wunder mcp stdio`: the MCP server of
// /wunder/mcp over stdin/stdout, for desktop clients that launch a command.
func newMCPCmd(rf *rootFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "MCP front-end commands"}
	cmd.AddCommand(&cobra.Command{
		Use:   "stdio",
		Short: "Serve wunder's MCP server (wunder@run) over stdin/stdout",
		Long: "Serve wunder's MCP server over stdin/stdout (newline-delimited JSON-RPC), for desktop clients that\n" +
			"launch a command (Claude Desktop: \"command\": \"wunder\", \"args\": [\"mcp\", \"stdio\"]). The caller acts as\n" +
			"mcp.server.user_id. Logs go to stderr; stdout carries only the protocol.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(rf.configPath)
			if err != nil {
				return err
			}
			log := newLogger(cfg)
			ctx := cmd.Context()
			a, err := build(ctx, cfg, log)
			if err != nil {
				return withCode(exitFailure, err)
			}
			h := newMCPHandler(cfg, a.orch, a.mcp.set, nil, a.gw.HeaderLanguage, a.attach, a.tel.TracerProvider(), log) // no headers: i18n.default_language
			err = h.Server().Run(ctx, &mcp.IOTransport{Reader: readCloser{cmd.InOrStdin()}, Writer: writeCloser{cmd.OutOrStdout()}})
			cerr := a.close(context.WithoutCancel(ctx))
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
				return withCode(exitFailure, err)
			}
			return cerr
		},
	})
	return cmd
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
