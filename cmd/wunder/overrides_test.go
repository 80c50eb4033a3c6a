package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
)

// skip_tool_calls answers without tools; config_overrides reach the model
// request, limited to what llm.request_overrides allows.
func TestSkipToolCallsAndConfigOverrides(t *testing.T) {
	fake := fakemodel.Directives()
	model := httptest.NewServer(&fakellm.Server{Chunks: 2, Model: fake})
	t.Cleanup(model.Close)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		m := c.LLM.Models["fake"]
		m.BaseURL = model.URL + "/v1"
		c.LLM.Models["fake"] = m
		c.LLM.RequestOverrides = []string{"temperature", "max_output", "tool_call_mode"}
	})

	// The question makes the fake model call write_file; skipped, the run
	// ends after one model call with nothing written.
	code, got := adminDo(t, s, "POST", "/wunder", `{"user_id":"alice","question":"please write a note","tool_names":["write_file","read_file"],"skip_tool_calls":true,"stream":false}`)
	if code != 200 || got["state"] != "finished" || got["stop_reason"] != "model_response" {
		t.Fatalf("skip_tool_calls run: %d %v", code, got)
	}
	reqs := fake.Take()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d calls, want 1", len(reqs))
	}
	if len(reqs[0].Tools) > 0 || strings.Contains(mustJSON(reqs[0].Messages), "write_file") {
		t.Errorf("a skip_tool_calls run offered tools: %s", mustJSON(reqs[0]))
	}
	if _, err := os.Stat(filepath.Join(s.dir, "workspaces", "alice", "notes.txt")); err == nil {
		t.Error("a skip_tool_calls run wrote notes.txt")
	}

	// Overrides reach the request.
	code, got = adminDo(t, s, "POST", "/wunder", `{"user_id":"alice","question":"hello","stream":false,"config_overrides":{"temperature":0.3,"max_output":77,"tool_call_mode":"function_call"}}`)
	if code != 200 || got["state"] != "finished" {
		t.Fatalf("run with overrides: %d %v", code, got)
	}
	reqs = fake.Take()
	if len(reqs) != 1 || reqs[0].Temperature == nil || *reqs[0].Temperature != 0.3 || reqs[0].MaxOutput != 77 {
		t.Errorf("the model request with overrides: %s", mustJSON(reqs))
	}

	for _, c := range []struct{ body, want string }{
		{`{"max_rounds":2}`, "llm.request_overrides"},
		{`{"top_p":0.5}`, "config_overrides.top_p"},
		{`{"temperature":3}`, "config_overrides.temperature"},
		{`{"tool_call_mode":"telepathy"}`, "config_overrides.tool_call_mode"},
		{`{"max_output":"lots"}`, "config_overrides.max_output"},
	} {
		code, got := adminDo(t, s, "POST", "/wunder", `{"user_id":"alice","question":"hi","stream":false,"config_overrides":`+c.body+`}`)
		if code != 400 || !strings.Contains(mustJSON(got["detail"]), c.want) {
			t.Errorf("config_overrides %s: %d %v; want 400 naming %s", c.body, code, got, c.want)
		}
	}
	if reqs := fake.Take(); len(reqs) != 0 {
		t.Errorf("refused requests reached the model %d times", len(reqs))
	}
}
