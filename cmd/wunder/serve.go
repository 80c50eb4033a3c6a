package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

func newServeCmd(rf *rootFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the wunder server",
		Long: "Run the wunder server. With no configuration file it starts on the defaults: SQLite and workspaces\n" +
			"under ./data, port 8000. Set WUNDER_LLM_BASE_URL, WUNDER_LLM_MODEL and WUNDER_LLM_API_KEY to use a model.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(rf.configPath)
			if err != nil {
				return err
			}
			log := newLogger(cfg)
			for _, w := range cfg.Warnings() {
				log.Warn("configuration", "warning", w)
			}
			ctx := cmd.Context()
			a, err := build(ctx, cfg, log)
			if err != nil {
				return withCode(exitFailure, err)
			}
			ln, err := net.Listen("tcp", cfg.Addr())
			if err != nil {
				_ = a.close(context.Background())
				return withCode(exitFailure, err)
			}
			return withCode(exitFailure, a.serve(ctx, ln))
		},
	}
}

// serve runs the HTTP server on ln until ctx ends, then shuts down: stop
// accepting, let requests and runs finish within shutdown_timeout_s, cancel
// what is left, close the store.
func (a *app) serve(ctx context.Context, ln net.Listener) error {
	// HTTP/1.1 and cleartext HTTP/2 (h2c, prior knowledge) on one port:
	// gRPC clients need HTTP/2; Connect, gRPC-Web and everything else
	// speak either.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           a.handler(),
		ReadHeaderTimeout: a.cfg.Server.ReadHeaderTimeout(),
		IdleTimeout:       2 * time.Minute,
		Protocols:         protocols,
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	if a.cfg.Security.APIKey == "" && !isLoopback(host) {
		a.log.Warn("no API key: anyone who reaches this port can run tasks; set WUNDER_API_KEY", "addr", ln.Addr().String())
	}
	model := a.models.Default()
	if model == "" {
		model = "none: POST /wunder answers 503 until one is configured (WUNDER_LLM_BASE_URL, WUNDER_LLM_MODEL)"
	}
	a.log.Info("wunder listening", "addr", ln.Addr().String(), "version", version,
		"storage", a.cfg.Storage.EffectiveBackend(), "default_model", model)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = a.close(context.Background())
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down", "timeout", a.cfg.Server.ShutdownTimeout())
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.Server.ShutdownTimeout())
	defer cancel()
	// Runs first: streams of running runs end with their final events.
	cerr := a.close(sctx)
	serr := srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if errors.Is(cerr, context.DeadlineExceeded) {
		a.log.Warn("runs still going at the shutdown deadline were cancelled")
		cerr = nil
	}
	if serr != nil && !errors.Is(serr, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", serr)
	}
	return cerr
}
