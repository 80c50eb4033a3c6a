package usertools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/usertools"
	"github.com/wunder/wunder/orchestrator"
)

func raws(list ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(list))
	for i, s := range list {
		out[i] = json.RawMessage(s)
	}
	return out
}

// TestSetServersRefuses: each class of bad input is refused with an error
// wrapping ErrInvalidArgument that says what is wrong, and nothing is
// written.
func TestSetServersRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &usertools.Options{MaxServers: 2, Access: accessRules{"alice": {Denied: []string{"alice@ok@secret"}}}})
	ctx := context.Background()
	good := `{"name":"ok","url":"https://ok.example/grep,secret","shared_tools":["grep"]}`
	if _, err := e.set.SetServers(ctx, "alice", raws(good)); err != nil {
		t.Fatal(err)
	}
	e.conn.setDown(errors.New("connection refused"))
	for what, c := range map[string]struct {
		servers []string
		want    string
	}{
		"too many servers":      {[]string{good, `{"name":"b","url":"https://b/x"}`, `{"name":"c","url":"https://c/x"}`}, "at most 2"},
		"not an object":         {[]string{`["x"]`}, "must be a JSON object"},
		"no name":               {[]string{`{"url":"https://b/x"}`}, "name is required"},
		"bad name":              {[]string{`{"name":"a@b","url":"https://b/x"}`}, `contains '@'`},
		"name with a dot":       {[]string{`{"name":"a.b","url":"https://b/x"}`}, "only A-Z a-z 0-9 _ -"},
		"long name":             {[]string{`{"name":"` + strings.Repeat("n", 65) + `","url":"https://b/x"}`}, "longer than 64"},
		"duplicate name":        {[]string{good, good}, "used by another server"},
		"unknown field":         {[]string{`{"name":"b","url":"https://b/x","bogus":1}`}, "bogus"},
		"stdio":                 {[]string{`{"name":"b","transport":"stdio"}`}, "stdio is not allowed"},
		"private url":           {[]string{`{"name":"b","url":"https://private.example/x"}`}, "private address"},
		"url and endpoint":      {[]string{`{"name":"b","url":"https://b/x","endpoint":"https://b/x"}`}, "not both"},
		"shared not a list":     {[]string{`{"name":"b","url":"https://b/x","shared_tools":"x"}`}, "list of tool names"},
		"shared not on server":  {[]string{`{"name":"b","url":"https://b/x","shared_tools":["y"]}`}, `has no tool "y"`},
		"shared twice":          {[]string{`{"name":"b","url":"https://b/x","shared_tools":["x","x"]}`}, "listed twice"},
		"shared not allowed":    {[]string{`{"name":"b","url":"https://b/x,y","allow_tools":["x"],"shared_tools":["y"]}`}, "not in allow_tools"},
		"shared but forbidden":  {[]string{`{"name":"ok","url":"https://ok.example/grep,secret","shared_tools":["secret"]}`}, "does not permit alice@ok@secret"},
		"shared, server down":   {[]string{`{"name":"d","url":"https://down/x","shared_tools":["x"]}`}, "cannot be checked"},
		"masked, nothing saved": {[]string{`{"name":"new","url":"https://n/x","bearer_token":"******"}`}, "no value is stored"},
	} {
		var raw []json.RawMessage
		for _, s := range c.servers {
			raw = append(raw, json.RawMessage(s))
		}
		_, err := e.set.SetServers(ctx, "alice", raw)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want invalid argument saying %q", what, err, c.want)
		}
	}
	got, _ := e.set.Servers(ctx, "alice")
	if len(got) != 1 || !strings.Contains(string(got[0]), `"shared_tools":["grep"]`) {
		t.Errorf("after refused writes the servers are %s", got)
	}
}

// TestServersMaskSecrets: a read masks secrets; writing the masked view
// back keeps the stored values; "endpoint" (the original's name) is read
// as url.
func TestServersMaskSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	in := `{"name":"s","endpoint":"https://s.example/x","bearer_token":"tok-123456","headers":{"X-Key":"key-123456"},"shared_tools":["x"]}`
	out, err := e.set.SetServers(ctx, "alice", raws(in))
	if err != nil {
		t.Fatal(err)
	}
	view := string(out[0])
	if strings.Contains(view, "tok-123456") || strings.Contains(view, "key-123456") || !strings.Contains(view, usertools.Masked) {
		t.Fatalf("view shows secrets: %s", view)
	}
	if !strings.Contains(view, `"url":"https://s.example/x"`) {
		t.Errorf("endpoint not read as url: %s", view)
	}
	if _, err := e.set.SetServers(ctx, "alice", out); err != nil {
		t.Fatalf("writing the masked view back: %v", err)
	}
	c, _ := e.configs.Get(ctx, "alice")
	if s := string(c.MCPServers[0].Config); !strings.Contains(s, "tok-123456") || !strings.Contains(s, "key-123456") {
		t.Errorf("stored config lost its secrets: %s", s)
	}
}

// TestServerTools lists a server's tools before it is saved, under the
// same checks as a save, and leaves no connection behind.
func TestServerTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	got, err := e.set.ServerTools(ctx, "alice", json.RawMessage(`{"name":"s","url":"https://s.example/a,b"}`))
	if err != nil || len(got) != 2 || got[0].Name != "a" || got[0].Canonical != "alice@s@a" {
		t.Fatalf("ServerTools = %+v, %v", got, err)
	}
	if e.conn.closed.Load() != 1 {
		t.Errorf("the listing's connection was not closed")
	}
	for _, bad := range []string{`{"name":"s","url":"https://private/a"}`, `{"url":"https://s/a"}`, `{"name":"s","transport":"stdio"}`, `7`} {
		if _, err := e.set.ServerTools(ctx, "alice", json.RawMessage(bad)); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("ServerTools(%s) = %v, want invalid argument", bad, err)
		}
	}
	e.conn.setDown(errors.New("connection refused"))
	if _, err := e.set.ServerTools(ctx, "alice", json.RawMessage(`{"name":"d","url":"https://down/a"}`)); !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a server that is down: %v", err)
	}
}
