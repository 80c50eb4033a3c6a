package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newHealthCmd is `wunder health`: GET /readyz (or /healthz with --live) on
// a server and exit 0 when it answers 200. Container images have no curl;
// this is their HEALTHCHECK and what an operator's script can call.
func newHealthCmd() *cobra.Command {
	var (
		server  string
		live    bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Check that a server is ready (GET /readyz): exit 0 when it is, 1 when not",
		Long: "health asks a running server whether it is ready to serve (GET /readyz: the store answers)\n" +
			"or, with --live, only whether the process answers (GET /healthz). It prints the answer\n" +
			"and exits 0 on 200, 1 otherwise. It is the Docker image's HEALTHCHECK.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := "/readyz"
			if live {
				path = "/healthz"
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			url := strings.TrimRight(server, "/") + path
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("--server: %w", err))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return withCode(exitFailure, fmt.Errorf("%s: %w", url, err))
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			fmt.Fprintln(cmd.OutOrStdout(), strings.TrimSpace(string(body)))
			if resp.StatusCode != http.StatusOK {
				return withCode(exitFailure, fmt.Errorf("%s: %s", url, resp.Status))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", envOr("WUNDER_SERVER", "http://127.0.0.1:8000"), "server URL ($WUNDER_SERVER)")
	cmd.Flags().BoolVar(&live, "live", false, "check liveness (/healthz) instead of readiness (/readyz)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "give up after this long")
	return cmd
}
