package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// POST /wunder/admin/llm/test makes one real chat call: the configured
// model answers; settings not saved yet (the stored key kept when they
// leave it out) against a dead endpoint report unreachable with the
// endpoint named; an unknown model is 404, settings that do not decode
// 400 naming the field.
func TestModelConnectionTest(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	const path = "/wunder/admin/llm/test"
	code, got := adminDo(t, s, "POST", path, `{"model_name":"fake"}`)
	if code != http.StatusOK || got["ok"] != true || !strings.Contains(got["reply"].(string), "connection test") {
		t.Fatalf("the configured model: %d %v", code, got)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	code, got = adminDo(t, s, "POST", path, `{"model_name":"fake","model":{"provider":"local","base_url":"http://`+dead+`/v1","model":"fake"}}`)
	if code != http.StatusOK || got["ok"] != false || got["kind"] != "unreachable" || !strings.Contains(got["error"].(string), dead) {
		t.Fatalf("a dead endpoint: %d %v", code, got)
	}
	before := s.fake.Requests.Load()
	for _, tc := range []struct {
		body string
		code int
		says string
	}{
		{`{"model_name":"nope"}`, 404, "nope"},
		{`{}`, 400, "model_name"},
		{`{"model":{"provider":"local","bogus":1}}`, 400, "bogus"},
		{`{"model":"x"}`, 400, "invalid_json"},
	} {
		code, got := adminDo(t, s, "POST", path, tc.body)
		if code != tc.code || !strings.Contains(strings.ToLower(toJSON(got)), tc.says) {
			t.Errorf("%s: %d %v; want %d naming %q", tc.body, code, got, tc.code, tc.says)
		}
	}
	if n := s.fake.Requests.Load() - before; n != 0 {
		t.Errorf("refused tests called the model %d times", n)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Settings not saved yet keep the stored key when they leave it out or
// send it masked, as the console shows it; a key given is the one sent.
func TestModelConnectionTestStoredKey(t *testing.T) {
	keyed := newKeyedModel(t, "sk-stored", "sk-other")
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		m := config.NewModel()
		m.Provider, m.BaseURL, m.Model, m.APIKey = config.ProviderLocal, keyed.url, "m", "sk-stored"
		c.LLM.Models["keyed"] = m
		c.LLM.Default = "fake"
	})
	entry := `"provider":"local","base_url":"` + keyed.url + `","model":"m"`
	for _, tc := range []struct{ key, sent string }{
		{``, "sk-stored"},
		{`,"api_key":"` + config.Mask + `"`, "sk-stored"},
		{`,"api_key":"sk-other"`, "sk-other"},
	} {
		code, got := adminDo(t, s, "POST", "/wunder/admin/llm/test", `{"model_name":"keyed","model":{`+entry+tc.key+`}}`)
		if code != http.StatusOK || got["ok"] != true || keyed.lastAuth() != "Bearer "+tc.sent {
			t.Errorf("api_key %q: %d %v, sent %q; want ok with %s", tc.key, code, got, keyed.lastAuth(), tc.sent)
		}
	}
}
