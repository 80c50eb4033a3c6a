package gateway_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// The load-test routes (/wunder/admin/throughput/...) through the real
// gateway server, in front of loadBook: an in-memory Throughput that
// keeps one test at a time with its reports, as cmd/wunder's adapter of
// internal/loadtest does, and records what each start was given.

type loadBook struct {
	mu      sync.Mutex
	active  map[string]any
	history []map[string]any
	started []gateway.ThroughputRequest
	calls   int
	// progress are the reports a watcher of the active test sees.
	progress []map[string]any
}

func (b *loadBook) StartThroughput(_ context.Context, req gateway.ThroughputRequest) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.active != nil {
		return nil, fmt.Errorf("%w: a load test runs already", orchestrator.ErrConflict)
	}
	if len(req.ConcurrencyList) == 0 || slices.ContainsFunc(req.ConcurrencyList, func(c int) bool { return c < 1 }) {
		return nil, fmt.Errorf("%w: concurrency_list needs levels of at least 1", orchestrator.ErrInvalidArgument)
	}
	b.started = append(b.started, req)
	b.active = map[string]any{"run_id": fmt.Sprintf("load_%d", len(b.history)+1), "levels": req.ConcurrencyList, "done": 0}
	b.progress = []map[string]any{b.active, {"run_id": b.active["run_id"], "done": 1}}
	return b.active, nil
}

func (b *loadBook) StopThroughput(context.Context) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.active == nil {
		return nil, fmt.Errorf("%w: no load test runs", orchestrator.ErrNotFound)
	}
	stopped := b.active
	stopped["stopped"] = true
	b.history = append(b.history, stopped)
	b.active = nil
	return stopped, nil
}

func (b *loadBook) ThroughputStatus(context.Context) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	return map[string]any{"active": b.active, "history": b.history}, nil
}

func (b *loadBook) ThroughputReport(_ context.Context, id string) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if id == "" && b.active != nil {
		return b.active, nil
	}
	for i := len(b.history) - 1; i >= 0; i-- {
		if id == "" || b.history[i]["run_id"] == id {
			return b.history[i], nil
		}
	}
	return nil, fmt.Errorf("%w: no load test report %q", orchestrator.ErrNotFound, id)
}

func (b *loadBook) WatchThroughput(context.Context) iter.Seq[any] {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	var reps []map[string]any
	if b.active != nil {
		reps = b.progress
	}
	return func(yield func(any) bool) {
		for _, r := range reps {
			if !yield(r) {
				return
			}
		}
	}
}

func (b *loadBook) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// streamTypes reads a whole event stream and returns its event types and
// the run_id of each event's data ("" when it has none).
func streamTypes(t *testing.T, resp *http.Response) (types []string, runIDs []string) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, ct)
	}
	for ev, err := range sse.Read(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		id := ""
		if i := strings.Index(string(ev.Data), `"run_id":"`); i >= 0 {
			rest := string(ev.Data)[i+len(`"run_id":"`):]
			id = rest[:strings.IndexByte(rest, '"')]
		}
		runIDs = append(runIDs, id)
	}
	return types, runIDs
}

// A test's life over the routes: nothing runs (status idle, stop and
// report not found, the stream says idle), one starts (202; concurrency
// taken for concurrency_list), a second conflicts, the stream shows its
// progress and its last report as finished, it stops, and its report is
// found by id and as the latest.
func TestThroughputRoutesLifecycle(t *testing.T) {
	t.Parallel()
	book := &loadBook{}
	e, admin, _ := adminEnv(t, gateway.Options{Throughput: book})

	st := decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/throughput/status", "", admin...), 200)
	if st["active"] != nil {
		t.Errorf("idle status = %v", st)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/throughput/stop", "", admin...), 404, "not_found")
	wantProblem(t, e.do(t, "GET", "/wunder/admin/throughput/report", "", admin...), 404, "not_found")
	if types, _ := streamTypes(t, e.do(t, "GET", "/wunder/admin/throughput/status?stream=1", "", admin...)); strings.Join(types, ",") != "throughput_idle" {
		t.Errorf("idle stream: %v", types)
	}

	rep := decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/throughput/start",
		`{"concurrency":[1,4],"runs_per_step":3,"question":"hi","model_name":"fake","stream":false,"tool_names":["read_file"]}`, admin...), http.StatusAccepted)
	id, _ := rep["run_id"].(string)
	got := book.started[0]
	if id == "" || !slices.Equal(got.ConcurrencyList, []int{1, 4}) || got.Concurrency != nil || got.RunsPerStep != 3 ||
		got.Stream == nil || *got.Stream || !slices.Equal(got.ToolNames, []string{"read_file"}) {
		t.Fatalf("start answered %v; the test got %+v", rep, got)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/throughput/start", `{"concurrency_list":[2]}`, admin...), 409, "conflict")

	types, ids := streamTypes(t, e.do(t, "GET", "/wunder/admin/throughput/status?stream=true", "", admin...))
	if strings.Join(types, ",") != "throughput_progress,throughput_progress,throughput_finished" || ids[2] != id {
		t.Errorf("stream of the running test: %v %v", types, ids)
	}
	if r := decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/throughput/report", "", admin...), 200); r["run_id"] != id {
		t.Errorf("report of the running test = %v", r)
	}

	if r := decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/throughput/stop", "", admin...), 200); r["stopped"] != true {
		t.Errorf("stop answered %v", r)
	}
	if r := decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/throughput/report?run_id="+id, "", admin...), 200); r["run_id"] != id {
		t.Errorf("report by id = %v", r)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/admin/throughput/report?run_id=load_99", "", admin...), 404, "not_found")
	st = decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/throughput/status?stream=0", "", admin...), 200)
	if h, _ := st["history"].([]any); st["active"] != nil || len(h) != 1 {
		t.Errorf("status after stop = %v", st)
	}
}

// Bad input is answered as a problem, without reaching the test where the
// route can tell; what only the test can judge is its 400.
func TestThroughputRoutesBadInput(t *testing.T) {
	t.Parallel()
	book := &loadBook{}
	e, admin, alice := adminEnv(t, gateway.Options{Throughput: book})
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/wunder/admin/throughput/start", `{"concurrency_list":[1],"concurrency":[2]}`, 400, "invalid_argument"},
		{"POST", "/wunder/admin/throughput/start", `{"concurrency_list":"1,2"}`, 400, "invalid_json"},
		{"POST", "/wunder/admin/throughput/start", `{"levels":[1]}`, 400, "unknown_field"},
		{"GET", "/wunder/admin/throughput/status?stream=yes", "", 400, "invalid_argument"},
		{"GET", "/wunder/admin/throughput/report?run_id=" + strings.Repeat("r", 129), "", 400, "invalid_argument"},
	} {
		wantProblem(t, e.do(t, tc.method, tc.path, tc.body, admin...), tc.status, tc.code)
	}
	for _, path := range []string{"/wunder/admin/throughput/start", "/wunder/admin/throughput/stop"} {
		wantProblem(t, e.do(t, "POST", path, `{"concurrency_list":[1]}`, alice...), 403, "permission_denied")
	}
	for _, path := range []string{"/wunder/admin/throughput/status", "/wunder/admin/throughput/status?stream=1", "/wunder/admin/throughput/report"} {
		wantProblem(t, e.do(t, "GET", path, "", alice...), 403, "permission_denied")
	}
	if n := book.count(); n != 0 {
		t.Errorf("refused requests reached the load test %d times", n)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/throughput/start", `{"concurrency_list":[0]}`, admin...), 400, "invalid_argument")
	wantProblem(t, e.do(t, "POST", "/wunder/admin/throughput/start", `{}`, admin...), 400, "invalid_argument")
}
