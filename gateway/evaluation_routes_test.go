package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// The evaluation routes (/wunder/admin/evaluation/...) through the real
// gateway server: what reaches the Evaluation behind them (cmd/wunder's
// adapter of internal/evaluation in production; evalBook here, a small
// in-memory book of runs that keeps what each call was given), and what a
// client gets back for good and bad input.

// adminEnv serves gw with accounts, the admin's key (adminKey) and one
// user, alice; admin and alice are their credentials' headers.
func adminEnv(t *testing.T, gw gateway.Options) (e *env, admin, alice []string) {
	t.Helper()
	gw.APIKey = adminKey
	gw.Auth = gateway.AuthOptions{Accounts: accountstest.NewMemStore(), TokenTTL: time.Hour}
	ae := &authEnv{env: newEnv(t, envOpts{gw: gw})}
	ae.addUser(t, "alice", "alice-password")
	return ae.env, []string{"X-API-Key", adminKey}, bearer(ae.login(t, "alice", "alice-password").Token)
}

// evalBook is an in-memory Evaluation: runs by id, each with the events
// its stream yields.
type evalBook struct {
	mu      sync.Mutex
	runs    map[string]map[string]any
	events  map[string][]gateway.EvaluationEvent
	started []gateway.EvaluationRequest
	filters []gateway.EvaluationFilter
	calls   int // every call, to show that a refused request reached none
	// failWatch, when set, ends a run's stream with it after its events.
	failWatch error
}

func newEvalBook() *evalBook {
	return &evalBook{runs: map[string]map[string]any{}, events: map[string][]gateway.EvaluationEvent{}}
}

func (b *evalBook) called() {
	b.mu.Lock()
	b.calls++
	b.mu.Unlock()
}

func (b *evalBook) StartEvaluation(_ context.Context, req gateway.EvaluationRequest) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if req.ModelName != "fake" {
		return nil, fmt.Errorf("%w: no model %q", orchestrator.ErrInvalidArgument, req.ModelName)
	}
	for _, r := range b.runs {
		if r["status"] == "running" {
			return nil, fmt.Errorf("%w: an evaluation runs already", orchestrator.ErrConflict)
		}
	}
	id := fmt.Sprintf("eval_%d", len(b.runs)+1)
	b.started = append(b.started, req)
	b.runs[id] = map[string]any{"run_id": id, "model_name": req.ModelName, "status": "running", "case_ids": req.CaseIDs}
	b.events[id] = []gateway.EvaluationEvent{
		{Type: "eval_started", Data: map[string]any{"run_id": id}},
		{Type: "eval_item", Data: map[string]any{"case_id": "c1", "score": 1}},
		{Type: "eval_finished", Data: map[string]any{"run_id": id, "score": 1}},
	}
	return b.runs[id], nil
}

func (b *evalBook) run(id string) (map[string]any, error) {
	r, ok := b.runs[id]
	if !ok {
		return nil, fmt.Errorf("%w: evaluation run %q", orchestrator.ErrNotFound, id)
	}
	return r, nil
}

func (b *evalBook) CancelEvaluation(_ context.Context, id string) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	r, err := b.run(id)
	if err != nil {
		return nil, err
	}
	if r["status"] != "running" {
		return nil, fmt.Errorf("%w: evaluation run %q has ended", orchestrator.ErrConflict, id)
	}
	r["status"] = "cancelled"
	return r, nil
}

func (b *evalBook) EvaluationRuns(_ context.Context, f gateway.EvaluationFilter) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.filters = append(b.filters, f)
	var out []map[string]any
	for _, r := range b.runs {
		if (f.ModelName == "" || r["model_name"] == f.ModelName) && (f.Status == "" || r["status"] == f.Status) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (b *evalBook) EvaluationCases(context.Context) (any, error) {
	b.called()
	return []map[string]any{{"name": "basic", "cases": 2}}, nil
}

func (b *evalBook) EvaluationRun(_ context.Context, id string) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	r, err := b.run(id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"run": r, "items": []any{}}, nil
}

func (b *evalBook) DeleteEvaluation(_ context.Context, id string) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if _, err := b.run(id); err != nil {
		return nil, err
	}
	delete(b.runs, id)
	delete(b.events, id)
	return map[string]any{"deleted": id}, nil
}

func (b *evalBook) WatchEvaluation(_ context.Context, id string) iter.Seq2[gateway.EvaluationEvent, error] {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	_, err := b.run(id)
	evs, fail := b.events[id], b.failWatch
	return func(yield func(gateway.EvaluationEvent, error) bool) {
		if err != nil {
			yield(gateway.EvaluationEvent{}, err)
			return
		}
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
		if fail != nil {
			yield(gateway.EvaluationEvent{}, fail)
		}
	}
}

func (b *evalBook) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// A run's life over the routes: started (202), listed with the filter
// the query gave, read, streamed from its start as SSE numbered from 1,
// cancelled once (a second cancel conflicts), deleted (then not found).
func TestEvaluationRoutesLifecycle(t *testing.T) {
	t.Parallel()
	book := newEvalBook()
	e, admin, _ := adminEnv(t, gateway.Options{Evaluation: book})

	run := decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/evaluation/start",
		`{"model_name":"fake","case_set":"basic","case_ids":["c1","c2"]}`, admin...), http.StatusAccepted)
	id, _ := run["run_id"].(string)
	if id == "" || run["status"] != "running" {
		t.Fatalf("start answered %v", run)
	}
	if got := book.started[0]; got.CaseSet != "basic" || strings.Join(got.CaseIDs, ",") != "c1,c2" {
		t.Errorf("the evaluation was started with %+v", got)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/evaluation/start", `{"model_name":"fake"}`, admin...), 409, "conflict")

	list := decode[struct {
		Runs []map[string]any `json:"runs"`
	}](t, e.do(t, "GET", "/wunder/admin/evaluation/runs?model_name=fake&status=running&until=2030-01-02T03:04:05Z&limit=5000", "", admin...), 200)
	if len(list.Runs) != 1 || list.Runs[0]["run_id"] != id {
		t.Errorf("runs = %v", list.Runs)
	}
	f := book.filters[len(book.filters)-1]
	if f.ModelName != "fake" || f.Status != "running" || !f.Until.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) || f.Limit != 1000 || !f.Since.IsZero() {
		t.Errorf("filter = %+v; want the query's, the limit capped at 1000", f)
	}
	decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/evaluation/runs?since=1h", "", admin...), 200)
	if f := book.filters[len(book.filters)-1]; f.Limit != 100 || time.Since(f.Since) < time.Hour || time.Since(f.Since) > 2*time.Hour {
		t.Errorf("since=1h, no limit: filter %+v; want about an hour ago and the default limit 100", f)
	}

	got := decode[struct {
		Run   map[string]any `json:"run"`
		Items []any          `json:"items"`
	}](t, e.do(t, "GET", "/wunder/admin/evaluation/"+id, "", admin...), 200)
	if got.Run["run_id"] != id || got.Items == nil {
		t.Errorf("GET run = %+v", got)
	}

	resp := e.do(t, "GET", "/wunder/admin/evaluation/stream/"+id, "", admin...)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, ct)
	}
	var types, ids []string
	for ev, err := range sse.Read(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		types, ids = append(types, ev.Type), append(ids, ev.ID)
	}
	if strings.Join(types, ",") != "eval_started,eval_item,eval_finished" || strings.Join(ids, ",") != "1,2,3" {
		t.Errorf("stream events %v ids %v", types, ids)
	}

	cases := decode[map[string][]map[string]any](t, e.do(t, "GET", "/wunder/admin/evaluation/cases", "", admin...), 200)
	if len(cases["case_sets"]) != 1 || cases["case_sets"][0]["name"] != "basic" {
		t.Errorf("cases = %v", cases)
	}

	if c := decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/evaluation/"+id+"/cancel", "", admin...), 200); c["status"] != "cancelled" {
		t.Errorf("cancel answered %v", c)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/evaluation/"+id+"/cancel", "", admin...), 409, "conflict")
	decode[map[string]any](t, e.do(t, "DELETE", "/wunder/admin/evaluation/"+id, "", admin...), 200)
	wantProblem(t, e.do(t, "GET", "/wunder/admin/evaluation/"+id, "", admin...), 404, "not_found")
	wantProblem(t, e.do(t, "GET", "/wunder/admin/evaluation/stream/"+id, "", admin...), 404, "not_found")
}

// Bad input is a problem answered before the Evaluation is asked: an id
// wunder cannot have issued, an unparsable time or limit, an oversized or
// unknown field in the body; a model the evaluation refuses is its 400.
func TestEvaluationRoutesBadInput(t *testing.T) {
	t.Parallel()
	book := newEvalBook()
	e, admin, _ := adminEnv(t, gateway.Options{Evaluation: book})
	long := strings.Repeat("x", 257)
	manyIDs := `["` + strings.Repeat(`c","`, 1000) + `c"]`
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/wunder/admin/evaluation/" + strings.Repeat("a", 65), "", 404, "not_found"},
		{"GET", "/wunder/admin/evaluation/bad.id", "", 404, "not_found"},
		{"DELETE", "/wunder/admin/evaluation/b%20d", "", 404, "not_found"},
		{"POST", "/wunder/admin/evaluation/b%27d/cancel", "", 404, "not_found"},
		{"GET", "/wunder/admin/evaluation/stream/b%22d", "", 404, "not_found"},
		{"GET", "/wunder/admin/evaluation/runs?until=yesterday", "", 400, "invalid_argument"},
		{"GET", "/wunder/admin/evaluation/runs?since=last-week", "", 400, "invalid_argument"},
		{"GET", "/wunder/admin/evaluation/runs?limit=-1", "", 400, "invalid_argument"},
		{"GET", "/wunder/admin/evaluation/runs?limit=ten", "", 400, "invalid_argument"},
		{"POST", "/wunder/admin/evaluation/start", `{"model_name":"` + long + `"}`, 400, "invalid_argument"},
		{"POST", "/wunder/admin/evaluation/start", `{"model_name":"fake","case_set":"` + long + `"}`, 400, "invalid_argument"},
		{"POST", "/wunder/admin/evaluation/start", `{"model_name":"fake","case_ids":` + manyIDs + `}`, 400, "invalid_argument"},
		{"POST", "/wunder/admin/evaluation/start", `{"model":"fake"}`, 400, "unknown_field"},
		{"POST", "/wunder/admin/evaluation/start", `{"model_name":`, 400, "invalid_json"},
		{"POST", "/wunder/admin/evaluation/start", ``, 400, "invalid_json"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			wantProblem(t, e.do(t, tc.method, tc.path, tc.body, admin...), tc.status, tc.code)
		})
	}
	if n := book.count(); n != 0 {
		t.Errorf("refused requests reached the evaluation %d times", n)
	}
	// The evaluation's own refusal keeps its status and words.
	p := wantProblem(t, e.do(t, "POST", "/wunder/admin/evaluation/start", `{"model_name":"gpt-nope"}`, admin...), 400, "invalid_argument")
	if !strings.Contains(p.Detail, "gpt-nope") {
		t.Errorf("detail %q does not name the model", p.Detail)
	}
}

// Only an admin reaches the routes: a user is refused (403), a caller
// without a credential asked for one (401), and neither reaches the
// evaluation.
func TestEvaluationRoutesAdminOnly(t *testing.T) {
	t.Parallel()
	book := newEvalBook()
	e, _, alice := adminEnv(t, gateway.Options{Evaluation: book})
	routes := [][2]string{
		{"POST", "/wunder/admin/evaluation/start"},
		{"POST", "/wunder/admin/evaluation/eval_1/cancel"},
		{"GET", "/wunder/admin/evaluation/runs"},
		{"GET", "/wunder/admin/evaluation/cases"},
		{"GET", "/wunder/admin/evaluation/stream/eval_1"},
		{"GET", "/wunder/admin/evaluation/eval_1"},
		{"DELETE", "/wunder/admin/evaluation/eval_1"},
	}
	for _, rt := range routes {
		body := ""
		if rt[1] == "/wunder/admin/evaluation/start" {
			body = `{"model_name":"fake"}`
		}
		wantProblem(t, e.do(t, rt[0], rt[1], body, alice...), 403, "permission_denied")
		if resp := e.do(t, rt[0], rt[1], body); resp.StatusCode != 401 {
			t.Errorf("%s %s without a credential: %d, want 401", rt[0], rt[1], resp.StatusCode)
		}
	}
	if n := book.count(); n != 0 {
		t.Errorf("refused callers reached the evaluation %d times", n)
	}
	// Without an Evaluation there are no routes.
	plain, admin, _ := adminEnv(t, gateway.Options{})
	if resp := plain.do(t, "GET", "/wunder/admin/evaluation/runs", "", admin...); resp.StatusCode != 404 {
		t.Errorf("no evaluation configured: %d, want 404", resp.StatusCode)
	}
}

// A stream whose source fails after it began ends there: the events sent
// stay, and nothing is appended after them.
func TestEvaluationStreamEndsOnError(t *testing.T) {
	t.Parallel()
	book := newEvalBook()
	book.failWatch = errors.New("the evaluation store went away")
	e, admin, _ := adminEnv(t, gateway.Options{Evaluation: book})
	run := decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/evaluation/start", `{"model_name":"fake"}`, admin...), 202)
	resp := e.do(t, "GET", "/wunder/admin/evaluation/stream/"+run["run_id"].(string), "", admin...)
	n := 0
	for ev, err := range sse.Read(resp.Body) {
		if err != nil {
			t.Fatalf("the stream broke instead of ending: %v", err)
		}
		if !strings.HasPrefix(ev.Type, "eval_") {
			t.Errorf("event %q after the failure", ev.Type)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d events, want the 3 sent before the failure", n)
	}
}
