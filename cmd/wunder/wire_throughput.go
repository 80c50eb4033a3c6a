package main

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/loadtest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// The admin load test drives the server through its whole HTTP stack:
// every run is a POST /wunder answered by the gateway's handler with all
// its middleware (auth, rate limit, body limit, access log, tracing),
// served by a real http.Server over an in-memory listener. In memory, not
// through the public listener, because that may be bound to an address
// this process cannot dial, sit behind TLS or a proxy, or be closed while
// shutting down; the price is that kernel TCP is not measured (`wunder
// bench` measures it from outside).

// throughputParts is the load-test manager and the in-memory server it
// drives.
type throughputParts struct {
	m   *loadtest.Manager
	srv *http.Server
	ln  *memListener
}

// newThroughput makes the manager; serve starts the in-memory server once
// the gateway's handler exists.
func newThroughput(cfg *config.Config, store *storage.Store, orch *orchestrator.Orchestrator, log *slog.Logger) *throughputParts {
	ln := newMemListener()
	hc := &http.Client{Transport: &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return ln.dial(ctx) },
		MaxIdleConnsPerHost: cfg.Throughput.MaxConcurrency,
	}}
	// A loopback name: the gateway answers for it (guard.go); the transport
	// dials the in-memory listener whatever the name.
	c := client.New("http://localhost", cfg.Security.APIKey, hc)
	target := func(ctx context.Context, userID string, req loadtest.Request) loadtest.Sample {
		return loadtest.Ask(ctx, c, client.RunRequest{UserID: userID, Question: req.Question, ToolNames: req.ToolNames, ModelName: req.ModelName}, req.Stream)
	}
	t := cfg.Throughput
	m := loadtest.NewManager(throughputStore{store}, target, loadtest.Limits{
		MaxConcurrency: t.MaxConcurrency, MaxRunsPerStep: t.MaxRunsPerStep,
		MaxDuration:    time.Duration(t.MaxDurationSeconds) * time.Second,
		RequestTimeout: time.Duration(t.RequestTimeoutSeconds) * time.Second,
	}, orch, log.With("component", "throughput"))
	return &throughputParts{m: m, srv: &http.Server{ReadHeaderTimeout: 10 * time.Second}, ln: ln}
}

// serve starts serving h to the load test's runs.
func (p *throughputParts) serve(h http.Handler) {
	p.srv.Handler = h
	go func() { _ = p.srv.Serve(p.ln) }() // ends when close closes the server
}

// close stops a running load test, then the in-memory server.
func (p *throughputParts) close() {
	p.m.Close()
	_ = p.srv.Close()
}

// throughputStore keeps reports as JSON in throughput_runs.
type throughputStore struct{ st *storage.Store }

func (s throughputStore) SaveThroughput(ctx context.Context, r *loadtest.Report) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.st.SaveThroughput(ctx, r.ID, r.Status, r.StartedAt, b)
}

func (s throughputStore) GetThroughput(ctx context.Context, id string) (*loadtest.Report, error) {
	b, err := s.st.GetThroughput(ctx, id)
	if err != nil {
		return nil, err
	}
	return decodeOne[loadtest.Report](b)
}

func (s throughputStore) ListThroughput(ctx context.Context, limit int) ([]*loadtest.Report, error) {
	raw, err := s.st.ListThroughput(ctx, limit)
	if err != nil {
		return nil, err
	}
	return decodeAll[loadtest.Report](raw)
}

func (s throughputStore) ListUnfinished(ctx context.Context, limit int) ([]*loadtest.Report, error) {
	raw, err := s.st.ListThroughput(ctx, limit, loadtest.StatusRunning, loadtest.StatusStopping)
	if err != nil {
		return nil, err
	}
	return decodeAll[loadtest.Report](raw)
}

// throughputAPI adapts the manager to the gateway's routes.
type throughputAPI struct{ m *loadtest.Manager }

var _ gateway.Throughput = throughputAPI{}

func (t throughputAPI) StartThroughput(ctx context.Context, req gateway.ThroughputRequest) (any, error) {
	stream := req.Stream == nil || *req.Stream
	return t.m.Start(ctx, loadtest.Request{Concurrency: req.ConcurrencyList, DurationS: req.DurationS, RunsPerStep: req.RunsPerStep,
		Question: req.Question, ModelName: req.ModelName, Stream: stream, ToolNames: req.ToolNames})
}

func (t throughputAPI) StopThroughput(ctx context.Context) (any, error) { return t.m.Stop(ctx) }

func (t throughputAPI) ThroughputStatus(ctx context.Context) (any, error) { return t.m.Status(ctx) }

func (t throughputAPI) ThroughputReport(ctx context.Context, id string) (any, error) {
	return t.m.Report(ctx, id)
}

func (t throughputAPI) WatchThroughput(ctx context.Context) iter.Seq[any] {
	return func(yield func(any) bool) {
		for r := range t.m.Watch(ctx) {
			if !yield(r) {
				return
			}
		}
	}
}

// memListener is a net.Listener whose connections are in-memory pipes
// made by dial.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

func (l *memListener) dial(ctx context.Context) (net.Conn, error) {
	server, clientEnd := net.Pipe()
	select {
	case l.conns <- server:
		return clientEnd, nil
	case <-l.closed:
		return nil, errors.New("the in-memory listener is closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "wunder.internal" }
