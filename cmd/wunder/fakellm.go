package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// newFakeLLMCmd serves the fake OpenAI-compatible model of the tests, for
// benchmarks and demos without a real model. Hidden: it is a tool, not a
// feature.
func newFakeLLMCmd() *cobra.Command {
	var addr string
	var chunks int
	var delay, first time.Duration
	cmd := &cobra.Command{
		Use:    "fakellm",
		Short:  "Serve a fake OpenAI-compatible model (for benchmarks and demos)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return withCode(exitFailure, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "fake model at http://%s/v1 (any model name)\n", ln.Addr())
			srv := &http.Server{Handler: &fakellm.Server{Chunks: chunks, ChunkDelay: delay, FirstDelay: first}, ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(ctx)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return withCode(exitFailure, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:9100", "listen address")
	cmd.Flags().IntVar(&chunks, "chunks", 8, "deltas per answer")
	cmd.Flags().DurationVar(&delay, "chunk-delay", 0, "delay between streamed chunks")
	cmd.Flags().DurationVar(&first, "first-delay", 0, "delay before a streamed answer's first chunk (the model's time to first token)")
	return cmd
}
