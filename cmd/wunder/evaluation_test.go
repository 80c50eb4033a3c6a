package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/evaluation"
	"github.com/wunder/wunder/internal/sse"
)

// startEvalServer is a server whose default model is the scripted model
// of testdata/eval-script.yaml, evaluating the case files in dirs.
func startEvalServer(t *testing.T, dirs ...string) *fixture {
	t.Helper()
	cases := t.TempDir()
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.yaml"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cases, filepath.Base(f)), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	script, err := filepath.Abs(filepath.Join("testdata", "eval-script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		m := config.NewModel()
		m.Provider, m.Script = config.ProviderScripted, script
		c.LLM.Models["scripted"] = m
		c.LLM.Default = "scripted"
		c.Evaluation.CasesDir = cases
	})
	return &fixture{s: s}
}

// evalEvents reads an evaluation's stream to its end.
func (f *fixture) evalEvents(t *testing.T, runID string, onItem func(evaluation.Item)) []sse.Event {
	t.Helper()
	r := f.rest(t, "GET", "/wunder/admin/evaluation/stream/"+runID, "", adminKey)
	mustStatus(t, r, 200)
	defer r.Body.Close()
	var evs []sse.Event
	for ev, err := range sse.Read(r.Body) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type == "eval_item" && onItem != nil {
			var it evaluation.Item
			if err := json.Unmarshal(ev.Data, &it); err != nil {
				t.Fatal(err)
			}
			onItem(it)
		}
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != "eval_finished" {
		t.Fatalf("the stream did not end with eval_finished: %d events", len(evs))
	}
	return evs
}

// The "done when": an evaluation over the starter cases (and one
// case whose check must fail) with the scripted model produces a stored,
// streamed report; skipped cases name what they miss; DELETE removes it.
func TestEvaluationStarterCases(t *testing.T) {
	f := startEvalServer(t, filepath.Join("..", "..", "eval", "cases"), filepath.Join("testdata", "eval-extra"))
	var started evaluation.Run
	decodeInto(t, f.rest(t, "POST", "/wunder/admin/evaluation/start", `{}`, adminKey), 202, &started)
	if started.Status != "running" || started.ModelName != "scripted" || started.CaseCount != 12 {
		t.Fatalf("started: %+v", started)
	}

	final := map[string]evaluation.Item{}
	f.evalEvents(t, started.ID, func(it evaluation.Item) {
		if it.Status != evaluation.StatusActive {
			final[it.CaseID] = it
		}
	})
	for _, id := range []string{"write-file", "read-file", "search-content", "edit-file", "execute-command", "json-file", "json-answer", "explain-recursion"} {
		if it := final[id]; it.Status != evaluation.StatusPassed {
			t.Errorf("%s: %s (%s), want passed; checks %+v, answer %q", id, it.Status, it.Error, it.Checks, it.Answer)
		}
	}
	for id, missing := range map[string]string{"mcp-echo": `MCP server "everything"`, "skill-data-report": `skill "data-report"`, "knowledge-handbook": `knowledge base "handbook"`} {
		if it := final[id]; it.Status != evaluation.StatusSkipped || !strings.Contains(it.SkipReason, missing) {
			t.Errorf("%s: %s %q, want skipped naming %s", id, it.Status, it.SkipReason, missing)
		}
	}
	if it := final["capital-australia"]; it.Status != evaluation.StatusFailed || len(it.Checks) != 1 || it.Checks[0].Passed || !strings.Contains(it.Checks[0].Detail, "Canberra") {
		t.Errorf("the wrong answer: %+v, want failed on its contains check", it)
	}

	var got struct {
		Run   evaluation.Run
		Items []evaluation.Item
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/evaluation/"+started.ID, "", adminKey), 200, &got)
	if r := got.Run; r.Status != "finished" || r.Passed != 8 || r.Failed != 1 || r.Skipped != 3 || r.Errors != 0 || r.Score != 88.89 || r.FinishedAt == nil {
		t.Errorf("stored run: %+v", r)
	}
	if len(got.Items) != 12 {
		t.Fatalf("stored items: %d, want 12", len(got.Items))
	}
	for _, it := range got.Items {
		if it.Status != final[it.CaseID].Status {
			t.Errorf("%s stored %s, streamed %s", it.CaseID, it.Status, final[it.CaseID].Status)
		}
		// Each case ran as its own user; its workspace is gone.
		if !strings.HasPrefix(it.UserID, evaluation.UserPrefix) {
			t.Errorf("%s ran as %q", it.CaseID, it.UserID)
		}
		if _, err := os.Stat(filepath.Join(f.s.app.cfg.Workspace.Root, it.UserID)); !os.IsNotExist(err) {
			t.Errorf("%s: workspace left behind (%v)", it.CaseID, err)
		}
	}

	var list struct{ Runs []evaluation.Run }
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/evaluation/runs?model_name=scripted", "", adminKey), 200, &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != started.ID || list.Runs[0].Score != 88.89 {
		t.Errorf("runs: %+v", list.Runs)
	}
	var cases struct {
		CaseSets []evaluation.CaseSet `json:"case_sets"`
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/evaluation/cases", "", adminKey), 200, &cases)
	if len(cases.CaseSets) != 5 {
		t.Errorf("case sets: %d, want 5", len(cases.CaseSets))
	}
	// A finished run's stream is rebuilt from the store.
	if evs := f.evalEvents(t, started.ID, nil); len(evs) != 14 {
		t.Errorf("replayed stream: %d events, want 14 (started, 12 items, finished)", len(evs))
	}

	var del struct {
		Deleted int `json:"deleted"`
	}
	decodeInto(t, f.rest(t, "DELETE", "/wunder/admin/evaluation/"+started.ID, "", adminKey), 200, &del)
	if del.Deleted != 13 {
		t.Errorf("deleted %d rows, want 13", del.Deleted)
	}
	mustStatus(t, f.rest(t, "GET", "/wunder/admin/evaluation/"+started.ID, "", adminKey), 404)
	mustStatus(t, f.rest(t, "GET", "/wunder/admin/evaluation/stream/"+started.ID, "", adminKey), 404)
}

// Cancel mid-run: asked while the first case runs, the run ends cancelled
// without the second case.
func TestEvaluationCancel(t *testing.T) {
	f := startEvalServer(t, filepath.Join("testdata", "eval-slow"))
	var started evaluation.Run
	decodeInto(t, f.rest(t, "POST", "/wunder/admin/evaluation/start", `{"case_set":"slow"}`, adminKey), 202, &started)
	cancelled := false
	var items []evaluation.Item
	evs := f.evalEvents(t, started.ID, func(it evaluation.Item) {
		items = append(items, it)
		if it.Status == evaluation.StatusActive && !cancelled {
			cancelled = true
			mustStatus(t, f.rest(t, "POST", "/wunder/admin/evaluation/"+started.ID+"/cancel", "", adminKey), 200)
		}
	})
	var fin evaluation.Run
	if err := json.Unmarshal(evs[len(evs)-1].Data, &fin); err != nil {
		t.Fatal(err)
	}
	if fin.Status != evaluation.StatusCancelled {
		t.Errorf("final: %+v, want cancelled", fin)
	}
	if len(items) != 2 || items[1].CaseID != "slow-one" || items[1].Status != evaluation.StatusCancelled {
		t.Errorf("items: %+v, want slow-one active then cancelled, slow-two never run", items)
	}
	// Cancelling an ended run is a conflict; deleting it works.
	mustStatus(t, f.rest(t, "POST", "/wunder/admin/evaluation/"+started.ID+"/cancel", "", adminKey), 409)
	mustStatus(t, f.rest(t, "DELETE", "/wunder/admin/evaluation/"+started.ID, "", adminKey), 200)
}

// Bad input is a 4xx problem, never a 500.
func TestEvaluationBadInput(t *testing.T) {
	f := startEvalServer(t, filepath.Join("testdata", "eval-extra"))
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/wunder/admin/evaluation/start", `{"model_name":"nope"}`, 400},
		{"POST", "/wunder/admin/evaluation/start", `{"case_set":"nope"}`, 400},
		{"POST", "/wunder/admin/evaluation/start", `{"case_ids":["nope"]}`, 400},
		{"POST", "/wunder/admin/evaluation/start", `{"bogus":1}`, 400},
		{"POST", "/wunder/admin/evaluation/start", `[`, 400},
		{"GET", "/wunder/admin/evaluation/runs?limit=x", "", 400},
		{"GET", "/wunder/admin/evaluation/runs?since=yesterday", "", 400},
		{"GET", "/wunder/admin/evaluation/ev_missing", "", 404},
		{"GET", "/wunder/admin/evaluation/" + strings.Repeat("x", 100), "", 404},
		{"POST", "/wunder/admin/evaluation/ev_missing/cancel", "", 404},
		{"DELETE", "/wunder/admin/evaluation/ev_missing", "", 404},
		{"GET", "/wunder/admin/evaluation/stream/ev_missing", "", 404},
	} {
		r := f.rest(t, tc.method, tc.path, tc.body, adminKey)
		if r.StatusCode != tc.want || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s %s %s: %d %s, want %d problem", tc.method, tc.path, tc.body, r.StatusCode, r.Header.Get("Content-Type"), tc.want)
		}
		r.Body.Close()
	}
}
