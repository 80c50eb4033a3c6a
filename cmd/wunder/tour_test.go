package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// The demo model's tour, on a real server with no model but the scripted
// one: the run plans and lists the workspace, asks approval to write a
// note (approval mode suggest), asks the user a question, and finishes;
// the note is in the workspace and the plan events are in the log.
func TestDemoTour(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		m := config.NewModel()
		m.Provider, m.Model = config.ProviderScripted, "demo"
		c.LLM.Models = map[string]config.Model{"demo": m}
	})
	tools, _ := json.Marshal(llm.TourTools)
	type paused struct {
		RunID     string `json:"run_id"`
		State     string `json:"state"`
		Approvals []struct {
			ID   string `json:"approval_id"`
			Tool string `json:"tool"`
		} `json:"approvals"`
		Questions []struct {
			ID      string   `json:"question_id"`
			Options []string `json:"options"`
		} `json:"questions"`
		Answer string `json:"answer"`
	}
	var p paused
	decodeInto(t, s.rest(t, "POST", "/wunder", `{"user_id":"newcomer","question":"show me the tour","approval_mode":"suggest","stream":false,"tool_names":`+string(tools)+`}`, nil), 200, &p)
	if p.State != "waiting_approval" || len(p.Approvals) != 1 || p.Approvals[0].Tool != "write_file" {
		t.Fatalf("the tour does not ask approval to write: %+v", p)
	}
	mustStatus(t, s.rest(t, "POST", "/wunder/runs/"+p.RunID+"/approvals/"+p.Approvals[0].ID+"?user_id=newcomer", `{"decision":"approve"}`, nil), 200)
	var q struct {
		ID      string   `json:"question_id"`
		Options []string `json:"options"`
	}
	asked := untilEvent(t, s, p.RunID, "user_input_required")
	_ = json.Unmarshal(asked[len(asked)-1].Data, &q)
	if q.ID == "" || len(q.Options) != 3 {
		t.Fatalf("the tour asks no question with options: %+v", q)
	}
	mustStatus(t, s.rest(t, "POST", "/wunder/runs/"+p.RunID+"/input?user_id=newcomer", `{"answer":"Add an MCP server"}`, nil), 200)
	var all strings.Builder
	for _, ev := range untilEvent(t, s, p.RunID, "final") {
		all.WriteString(ev.Type + " " + string(ev.Data) + "\n")
	}
	for _, want := range []string{"plan {", `"name":"list_files"`, "approval_decided {", "user_input_answered {", `"state":"finished"`, "That was the tour"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the tour's events lack %s", want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, "workspaces", "newcomer", "wunder-tour.md")); err != nil || !strings.Contains(string(b), "Hello from wunder") {
		t.Errorf("the tour's note: %q, %v", b, err)
	}
}

// untilEvent follows the newcomer's run from its start until an event of
// type typ, and returns the events read.
func untilEvent(t *testing.T, s *server, runID, typ string) []orchestrator.Event {
	t.Helper()
	r := s.rest(t, "GET", "/wunder/runs/"+runID+"/events?user_id=newcomer", "", nil)
	mustStatus(t, r, 200)
	var out []orchestrator.Event
	for ev, err := range sse.Read(r.Body) {
		if err != nil {
			t.Fatalf("following %s: %v", runID, err)
		}
		var e orchestrator.Event
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			t.Fatal(err)
		}
		if out = append(out, e); e.Type == typ {
			return out
		}
	}
	t.Fatalf("the stream of %s ended before %s", runID, typ)
	return nil
}
