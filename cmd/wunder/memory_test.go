package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// Long-term memory through the real server (issue 14's "Done when"): the
// model is the fake one behind a recorder that keeps every request it got,
// and can hold the summarisation calls until released.

// memoryPromptMark starts the English memory prompt: it tells the
// summarisation calls from the runs' calls.
const memoryPromptMark = "You maintain an assistant's long-term memory"

// memoryModel is the fake model over HTTP: the directives, with every
// request recorded; made with holdSummaries, it holds summarisation calls
// until released or their caller goes away.
type memoryModel struct{ *fakellm.Server }

func newMemoryModel(holdSummaries bool) *memoryModel {
	m := fakemodel.Directives()
	if holdSummaries {
		m.Hold(summarisation)
	}
	return &memoryModel{&fakellm.Server{Chunks: 3, Model: m}}
}

func summarisation(r *orchestrator.ModelRequest) bool {
	return len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, memoryPromptMark)
}

// requests returns what was recorded: the runs' calls and the
// summarisation calls.
func (m *memoryModel) requests() (runs, summaries []*orchestrator.ModelRequest) {
	for _, r := range m.Model.Requests() {
		if summarisation(r) {
			summaries = append(summaries, r)
		} else {
			runs = append(runs, r)
		}
	}
	return runs, summaries
}

// memoryServer is a wunder on dir (its store) whose model is rec; stop
// shuts it down as a signal would.
type memoryServer struct {
	*server
	stop func()
}

func startMemoryServer(t *testing.T, dir string, rec *memoryModel, mutate func(c *config.Config)) *memoryServer {
	t.Helper()
	modelSrv := httptest.NewServer(rec)
	t.Cleanup(modelSrv.Close)
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.Sandbox.Mode = config.SandboxNone // no commands here
	cfg.Security.APIKey = "admin-key"
	m := config.NewModel()
	m.Provider, m.BaseURL, m.Model = config.ProviderLocal, modelSrv.URL+"/v1", "fake"
	cfg.LLM.Models = map[string]config.Model{"fake": m}
	if mutate != nil {
		mutate(cfg)
	}
	s, stop := serveConfig(t, cfg)
	return &memoryServer{server: s, stop: stop}
}

var adminKey = map[string]string{"X-API-Key": "admin-key"}

func (s *memoryServer) json(t *testing.T, method, path, body string, hdr map[string]string, want int, v any) {
	t.Helper()
	res := s.rest(t, method, path, body, hdr)
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s = %d %s; want %d", method, path, res.StatusCode, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// ask runs a question for a user (as the admin naming them) and returns
// its session.
func (s *memoryServer) ask(t *testing.T, user, question string) string {
	t.Helper()
	var out struct {
		SessionID string `json:"session_id"`
		Answer    string `json:"answer"`
	}
	body, _ := json.Marshal(map[string]any{"user_id": user, "question": question, "stream": false})
	s.json(t, "POST", "/wunder", string(body), adminKey, 200, &out)
	return out.SessionID
}

type memoryTaskView struct {
	TaskID    string `json:"task_id"`
	UserID    string `json:"user_id"`
	SessionID string `json:"session_id"`
	State     string `json:"state"`
	Error     string `json:"error"`
	Model     string `json:"model"`
}

type memoryStatus struct {
	Active  []memoryTaskView `json:"active"`
	History []memoryTaskView `json:"history"`
}

func (s *memoryServer) status(t *testing.T, user string) memoryStatus {
	t.Helper()
	var st memoryStatus
	s.json(t, "GET", "/wunder/admin/memory/status?user_id="+user, "", adminKey, 200, &st)
	return st
}

// waitTask polls the task's status route until it reaches state: the
// observable end of the worker's work, not a sleep standing in for it.
func (s *memoryServer) waitTask(t *testing.T, id, state string) memoryTaskView {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var v memoryTaskView
		s.json(t, "GET", "/wunder/admin/memory/status/"+id, "", adminKey, 200, &v)
		if v.State == state {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory task %s is %s (%s) after 15s; want %s", id, v.State, v.Error, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type memoryRecords struct {
	Enabled bool `json:"enabled"`
	Records []struct {
		ID        string `json:"id"`
		SessionID string `json:"session_id"`
		Summary   string `json:"summary"`
		CreatedAt string `json:"created_at"`
	} `json:"records"`
}

// An enabled user's second run carries the first run's summary in its
// system prompt; the summarisation call is the memory prompt plus the
// session merged into one user message.
func TestMemorySecondRunSeesFirstSummary(t *testing.T) {
	t.Parallel()
	rec := newMemoryModel(false)
	s := startMemoryServer(t, dataDir(t), rec, nil)
	mustStatus(t, s.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"alice","password":"alice-password"}`, adminKey), 201)
	var login struct {
		Token string `json:"token"`
	}
	s.json(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"alice-password"}`, nil, 200, &login)
	alice := map[string]string{"Authorization": "Bearer " + login.Token}

	// Her own switch, with her token.
	var sw struct {
		UserID  string `json:"user_id"`
		Enabled bool   `json:"enabled"`
	}
	s.json(t, "PUT", "/wunder/memory/enabled", `{"enabled":true}`, alice, 200, &sw)
	if sw.UserID != "alice" || !sw.Enabled {
		t.Fatalf("PUT /wunder/memory/enabled = %+v", sw)
	}
	var first struct {
		SessionID string `json:"session_id"`
	}
	s.json(t, "POST", "/wunder", `{"question":"my favourite colour is teal","stream":false}`, alice, 200, &first)
	// The task is queued before the run's end is told.
	st := s.status(t, "alice")
	if len(st.Active)+len(st.History) != 1 {
		t.Fatalf("memory tasks after alice's first run: %+v; want one", st)
	}
	task := append(st.Active, st.History...)[0]
	if task.SessionID != first.SessionID {
		t.Fatalf("task %+v is not of session %s", task, first.SessionID)
	}
	done := s.waitTask(t, task.TaskID, "done")
	if done.Model != "fake" {
		t.Errorf("task's model = %q, want fake", done.Model)
	}

	var mine memoryRecords
	s.json(t, "GET", "/wunder/memory", "", alice, 200, &mine)
	if !mine.Enabled || len(mine.Records) != 1 {
		t.Fatalf("GET /wunder/memory = %+v; want enabled with one record", mine)
	}
	r := mine.Records[0]
	if r.SessionID != first.SessionID || !strings.Contains(r.Summary, "teal") || !strings.HasPrefix(r.Summary, "[20") || r.ID == "" || r.CreatedAt == "" {
		t.Errorf("record = %+v; want a timestamped summary of session %s mentioning teal", r, first.SessionID)
	}

	s.json(t, "POST", "/wunder", `{"question":"what is my favourite colour?","stream":false}`, alice, 200, nil)
	runs, summaries := rec.requests()
	if len(runs) != 2 {
		t.Fatalf("the model got %d run calls, want 2", len(runs))
	}
	if sys := runs[0].Messages[0].Content; strings.Contains(sys, "[Long-term Memory]") {
		t.Errorf("the first run's prompt has a memory block before anything was remembered:\n%s", sys)
	}
	sys := runs[1].Messages[0].Content
	if !strings.Contains(sys, "[Long-term Memory]") || !strings.Contains(sys, r.Summary) {
		t.Errorf("the second run's system prompt lacks the first run's summary %q:\n%s", r.Summary, sys)
	}
	// The summarisation call, as the original makes it. The second run's own
	// summarisation is queued when it ends and may already have reached the
	// model; the first call is the first session's (one worker, in order).
	if len(summaries) < 1 || len(summaries) > 2 {
		t.Fatalf("the model got %d summarisation calls by the end of the second run, want 1 (or 2, the second run's already started)", len(summaries))
	}
	sm := summaries[0].Messages
	if len(sm) != 2 || sm[0].Role != "system" || sm[1].Role != "user" ||
		!strings.Contains(sm[1].Content, "user: my favourite colour is teal") || !strings.Contains(sm[1].Content, "assistant: echo: my favourite colour is teal") {
		t.Errorf("summarisation request = %+v; want the memory prompt and the session merged into one user message", sm)
	}
}

// A user without memory (never enabled, or turned off) gets no task and no
// record, and no memory block.
func TestMemoryDisabledUserNothingStored(t *testing.T) {
	t.Parallel()
	rec := newMemoryModel(false)
	s := startMemoryServer(t, dataDir(t), rec, nil)
	s.ask(t, "bob", "never enabled")
	s.json(t, "POST", "/wunder/admin/memory/carol/enabled", `{"enabled":true}`, adminKey, 200, nil)
	s.json(t, "POST", "/wunder/admin/memory/carol/enabled", `{"enabled":false}`, adminKey, 200, nil)
	s.ask(t, "carol", "turned off")
	for _, u := range []string{"bob", "carol"} {
		if st := s.status(t, u); len(st.Active)+len(st.History) != 0 {
			t.Errorf("%s's memory tasks = %+v; want none", u, st)
		}
		var recs memoryRecords
		s.json(t, "GET", "/wunder/admin/memory/"+u, "", adminKey, 200, &recs)
		if recs.Enabled || recs.Records == nil || len(recs.Records) != 0 {
			t.Errorf("GET /wunder/admin/memory/%s = %+v; want disabled with an empty list", u, recs)
		}
	}
	if _, summaries := rec.requests(); len(summaries) != 0 {
		t.Errorf("the model got %d summarisation calls, want none", len(summaries))
	}
}

// A restart mid-queue loses no summarisation: the first server stops while
// its worker's summarisation call is held; a second server on the same
// store finishes the task.
func TestMemoryRestartMidQueueLosesNothing(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	rec := newMemoryModel(true)
	s1 := startMemoryServer(t, dir, rec, nil)
	s1.json(t, "POST", "/wunder/admin/memory/dora/enabled", `{"enabled":true}`, adminKey, 200, nil)
	sess := s1.ask(t, "dora", "remember the launch code is 4711")
	st := s1.status(t, "dora")
	if len(st.Active) != 1 {
		t.Fatalf("dora's active tasks = %+v; want one", st)
	}
	id := st.Active[0].TaskID
	<-rec.Model.Held() // the worker is inside the summarisation call
	var mid memoryTaskView
	s1.json(t, "GET", "/wunder/admin/memory/status/"+id, "", adminKey, 200, &mid)
	if mid.State != "running" {
		t.Fatalf("task while its call is held = %+v; want running", mid)
	}
	s1.stop()

	rec.Model.Hold(nil) // the second server's call goes through
	s2 := startMemoryServer(t, dir, rec, nil)
	s2.waitTask(t, id, "done")
	var recs memoryRecords
	s2.json(t, "GET", "/wunder/admin/memory/dora", "", adminKey, 200, &recs)
	if len(recs.Records) != 1 || recs.Records[0].SessionID != sess || !strings.Contains(recs.Records[0].Summary, "4711") {
		t.Errorf("dora's records after the restart = %+v; want the summary of %s", recs, sess)
	}
}

// Bad input is a 4xx problem, never a 500; memory off is 503.
func TestMemoryRoutesRefuseBadInput(t *testing.T) {
	t.Parallel()
	rec := newMemoryModel(false)
	s := startMemoryServer(t, dataDir(t), rec, nil)
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/wunder/admin/memory/alice/enabled", `{}`, 400},
		{"POST", "/wunder/admin/memory/alice/enabled", `{"enabled":"yes"}`, 400},
		{"POST", "/wunder/admin/memory/alice/enabled", `{"enabled":true,"x":1}`, 400},
		{"POST", "/wunder/admin/memory/alice/enabled", `not json`, 400},
		{"PUT", "/wunder/admin/memory/alice/sess_none", `{"summary":"x"}`, 404},
		{"PUT", "/wunder/admin/memory/alice/sess_none", `{"summary":"  "}`, 400},
		{"PUT", "/wunder/admin/memory/alice/bad%20id", `{"summary":"x"}`, 404},
		{"DELETE", "/wunder/admin/memory/alice/sess_none", ``, 404},
		{"GET", "/wunder/admin/memory/status/nope", ``, 404},
		{"GET", "/wunder/admin/memory/status?limit=-1", ``, 400},
		{"GET", "/wunder/admin/memory/status?user_id=" + strings.Repeat("u", 200), ``, 400},
		{"GET", "/wunder/admin/memory/" + strings.Repeat("u", 200), ``, 400},
		{"GET", "/wunder/memory", ``, 400}, // the admin names no user
	} {
		res := s.rest(t, c.method, c.path, c.body, adminKey)
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != c.want || !strings.Contains(res.Header.Get("Content-Type"), "problem+json") {
			t.Errorf("%s %s %s = %d %s; want a %d problem", c.method, c.path, c.body, res.StatusCode, b, c.want)
		}
	}

	off := startMemoryServer(t, dataDir(t), rec, func(c *config.Config) { c.Memory.Enabled = false })
	res := off.rest(t, "GET", "/wunder/admin/memory/alice", "", adminKey)
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET /wunder/admin/memory/alice with memory.enabled false = %d, want 503", res.StatusCode)
	}
}
