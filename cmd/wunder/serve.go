package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/gctune"
)

func newServeCmd(rf *rootFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the wunder server",
		Long: "Run the wunder server. With no configuration file it starts on the defaults: SQLite and workspaces\n" +
			"under ./data, 127.0.0.1:8000. Set WUNDER_LLM_BASE_URL, WUNDER_LLM_MODEL and WUNDER_LLM_API_KEY to use a model.\n\n" +
			"Without an API key (WUNDER_API_KEY) it listens on loopback only: another host, such as\n" +
			"WUNDER_HOST=0.0.0.0, is refused unless security.allow_unauthenticated is true.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(rf.configPath)
			if err != nil {
				return err
			}
			log := newLogger(cfg)
			defer startGCTuner(cfg, log).Stop()
			for _, w := range cfg.Warnings() {
				log.Warn("configuration", "warning", w)
			}
			ctx := cmd.Context()
			a, err := build(ctx, cfg, log)
			if err != nil {
				return withCode(exitFailure, err)
			}
			a.config.load.Path = rf.configPath // the admin API rereads the base file's raw values
			ln, err := net.Listen("tcp", cfg.Addr())
			if err != nil {
				_ = a.close(context.Background())
				return withCode(exitFailure, err)
			}
			if err := a.serve(ctx, ln); err != nil {
				return withCode(exitFailure, err)
			}
			return nil // a clean shutdown (SIGTERM, Ctrl-C) exits 0
		},
	}
}

// startGCTuner gives the collector's heap goal its floor
// (tuning.gc_min_heap_mb), unless GOGC is set: see internal/gctune.
func startGCTuner(cfg *config.Config, log *slog.Logger) *gctune.Tuner {
	floor := uint64(cfg.Tuning.GCMinHeap()) << 20
	t := gctune.Start(floor, os.Getenv)
	switch {
	case t != nil:
		log.Debug("garbage collector: heap goal floor", "mib", cfg.Tuning.GCMinHeap())
	case floor > 0:
		log.Info("garbage collector: GOGC is set, tuning.gc_min_heap_mb left unused", "gogc", os.Getenv("GOGC"))
	}
	return t
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
		// The whole request, body included; an answer streamed after the
		// body was read is not bounded by it (net/http clears the read
		// deadline once the body is done).
		ReadTimeout:    a.cfg.Server.ReadTimeout(),
		IdleTimeout:    a.cfg.Server.IdleTimeout(),
		MaxHeaderBytes: a.cfg.Server.MaxHeaderBytes,
		Protocols:      protocols,
		// A quiet HTTP/2 connection is pinged: the keep-alive of gRPC
		// streams, which have no comments to send.
		HTTP2: &http.HTTP2Config{SendPingTimeout: a.cfg.Server.HTTP2Ping()},
	}
	auth, err := a.exposure(ln.Addr())
	if err != nil {
		_ = a.close(context.Background())
		return err
	}
	model := a.models.Default()
	if model == "" {
		model = "none: POST /wunder answers 503 until one is configured (WUNDER_LLM_BASE_URL, WUNDER_LLM_MODEL)"
	}
	a.log.Info("wunder listening", "addr", ln.Addr().String(), "auth", auth, "version", version,
		"storage", a.cfg.Storage.EffectiveBackend(), "default_model", model)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = a.close(context.Background())
		return err
	case <-ctx.Done():
	}
	a.drain(ctx)
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

// drain is the start of a stop: /readyz says 503 at once (the balancer
// stops sending work), the server goes on serving for
// server.drain_delay_s (not after Ctrl-C: nobody balances a terminal),
// then its event streams end resumably (gateway.Server.Drain), and the
// stop goes on: new work is refused with 503 shutting_down and a
// Retry-After, the runs finish or are cut at the shutdown deadline.
func (a *app) drain(ctx context.Context) {
	a.draining.Store(true)
	delay := a.cfg.Server.DrainDelay()
	if cause := context.Cause(ctx); cause != nil && strings.HasPrefix(cause.Error(), os.Interrupt.String()) {
		delay = 0
	}
	if delay > 0 {
		a.log.Info("draining: /readyz says 503; serving on until the balancer has seen it", "drain_delay", delay)
		t := time.NewTimer(delay)
		<-t.C
	}
	a.gw.Drain()
}

// exposure says who can call the server on addr, for the start-up log, and
// refuses a non-loopback address without an API key unless
// security.allow_unauthenticated says so. Validation already refuses such a
// server.host; this checks the address actually bound (a "localhost" that
// resolved elsewhere, a listener made by hand).
func (a *app) exposure(addr net.Addr) (string, error) {
	host, _, _ := net.SplitHostPort(addr.String())
	sec := a.cfg.Security
	switch {
	case sec.APIKey != "":
		return "api key required", nil
	case config.IsLoopback(host):
		return "off (no API key): loopback only, other machines cannot connect", nil
	case sec.AllowUnauthenticated:
		a.log.Warn("no API key and security.allow_unauthenticated is true: anyone who reaches this port can run tasks; set WUNDER_API_KEY",
			"addr", addr.String())
		return "off (no API key, allow_unauthenticated): open to anyone who reaches the port", nil
	}
	return "", fmt.Errorf("refusing to listen on %s without an API key: set security.api_key (WUNDER_API_KEY), "+
		"listen on 127.0.0.1, or set security.allow_unauthenticated: true", addr)
}
