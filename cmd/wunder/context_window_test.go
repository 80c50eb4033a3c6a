package main

import (
	"net/http"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// POST /wunder/admin/llm/context_window: a probe reports what the
// provider says (the fake lists no lengths: unknown) and records nothing;
// a recorded window goes through the llm section's validation into the
// configuration.
func TestContextWindowProbeAndRecord(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		m := c.LLM.Models["fake"]
		m.MaxOutput = 1000
		c.LLM.Models["fake"] = m
	})
	const path = "/wunder/admin/llm/context_window"
	code, got := adminDo(t, s, "POST", path, `{"model_name":"fake"}`)
	if code != http.StatusOK || got["source"] != "unknown" || got["max_context"] != 0.0 || got["detail"] == nil {
		t.Fatalf("probe: %d %v", code, got)
	}
	code, got = adminDo(t, s, "POST", path, `{"model_name":"fake","max_context":32000}`)
	if code != http.StatusOK || got["source"] != "recorded" || got["configured_max_context"] != 32000.0 {
		t.Fatalf("record: %d %v", code, got)
	}
	_, doc := adminDo(t, s, "GET", "/wunder/admin/llm", "")
	if m := doc["llm"].(map[string]any)["models"].(map[string]any)["fake"].(map[string]any); m["max_context"] != 32000.0 || m["api_key"] == nil {
		t.Fatalf("llm section after recording: %v", m)
	}
	if s.app.config.cur.Load().LLM.Models["fake"].MaxContext != 32000 {
		t.Fatal("the recorded window is not in force")
	}
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"model_name":"nosuch"}`, http.StatusNotFound},
		{`{"model_name":"nosuch","max_context":8000}`, http.StatusNotFound},
		{`{"model_name":"fake","max_context":0}`, http.StatusBadRequest},
		{`{"model_name":"fake","max_context":500}`, http.StatusBadRequest}, // below max_output
		{`{}`, http.StatusBadRequest},
	} {
		if code, got := adminDo(t, s, "POST", path, tc.body); code != tc.code {
			t.Errorf("%s: %d %v, want %d", tc.body, code, got, tc.code)
		}
	}
}
