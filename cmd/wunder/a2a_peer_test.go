package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
)

// callQuestion is a question that makes fakellm call tool (its wire name)
// with {"message": message}.
func callQuestion(t *testing.T, tool, message string) string {
	t.Helper()
	args, err := json.Marshal(map[string]string{"message": message})
	if err != nil {
		t.Fatal(err)
	}
	return "please call " + tool + " " + string(args)
}

// askAll runs req on c and returns its whole event log.
func askAll(t *testing.T, c *client.Client, req client.RunRequest) []client.Event {
	t.Helper()
	var evs []client.Event
	for ev, err := range c.Ask(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// a2aResults decodes the a2a_result events of a log.
func a2aResults(t *testing.T, evs []client.Event) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type == "a2a_result" {
			var d map[string]any
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

func eventTypes(evs []client.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// Two real wunders: B has a2a.services pointing at A. A run on B calls
// a2a@A (a2a__A on the model's wire), A answers through its own fake model,
// and B answers with A's reply — in both tool-call modes. B's log carries
// the a2a_request / a2a_status / a2a_result events; A keeps the delegated
// task as a run of its A2A user.
func TestA2ADelegationBetweenTwoWunders(t *testing.T) {
	a := startServer(t, nil)
	b := startServer(t, func(c *config.Config) {
		c.A2A.Services = []config.A2AService{{Name: "A", Endpoint: a.url, Enabled: true, MaxDepth: 3, Description: "wunder A"}}
	})
	cb := client.New(b.url, "", nil)
	ca := client.New(a.url, "", nil)
	for _, mode := range []string{"function_call", "tool_call"} {
		t.Run(mode, func(t *testing.T) {
			msg := "hello A from B in " + mode
			evs := askAll(t, cb, client.RunRequest{UserID: "u-b", Question: callQuestion(t, "a2a__A", msg),
				ToolNames: []string{"a2a@A"}, ToolCallMode: mode})
			f := finalOf(t, evs)
			if f.State != "finished" || !strings.Contains(f.Answer, "echo: "+msg) {
				t.Fatalf("B's final = %+v; events %v", f, eventTypes(evs))
			}
			types := eventTypes(evs)
			for _, want := range []string{"a2a_request", "a2a_status", "a2a_result"} {
				if !slices.Contains(types, want) {
					t.Fatalf("B's log has no %s: %v", want, types)
				}
			}
			if slices.Index(types, "a2a_request") > slices.Index(types, "a2a_result") {
				t.Fatalf("a2a_result before a2a_request: %v", types)
			}
			res := a2aResults(t, evs)
			if len(res) != 1 || res[0]["state"] != "completed" || res[0]["service"] != "A" {
				t.Fatalf("a2a_result = %v", res)
			}
			taskID, _ := res[0]["task_id"].(string)
			if taskID == "" {
				t.Fatalf("a2a_result without task_id: %v", res[0])
			}
			// A recorded the delegated task as a run of its A2A user.
			run, err := ca.GetRun(t.Context(), "a2a", taskID)
			if err != nil {
				t.Fatalf("A's run %s: %v", taskID, err)
			}
			if run.State != "finished" || run.Answer != "echo: "+msg {
				t.Fatalf("A's run = %+v, want finished with %q", run, "echo: "+msg)
			}
		})
	}
}

// The recursion guard through the wiring: A offers a2a@B to its A2A runs
// with max_depth 1, so B -> A -> B stops at A with a refusal that travels
// back as A's answer and then B's.
func TestA2ADelegationDepthGuard(t *testing.T) {
	var target atomic.Pointer[url.URL] // B, known once it listens
	proxy := httptest.NewServer(&httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(r *httputil.ProxyRequest) {
		if u := target.Load(); u != nil {
			r.SetURL(u)
		}
	}})
	t.Cleanup(proxy.Close)
	a := startServer(t, func(c *config.Config) {
		c.A2A.Services = []config.A2AService{{Name: "B", Endpoint: proxy.URL, Enabled: true, MaxDepth: 1}}
		c.A2A.Server.ToolNames = []string{"a2a@B"}
	})
	b := startServer(t, func(c *config.Config) {
		c.A2A.Services = []config.A2AService{{Name: "A", Endpoint: a.url, Enabled: true, MaxDepth: 3}}
		c.A2A.Server.ToolNames = []string{"a2a@A"}
	})
	bu, err := url.Parse(b.url)
	if err != nil {
		t.Fatal(err)
	}
	target.Store(bu)
	if resp, err := http.Get(proxy.URL + "/.well-known/agent-card.json"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("B through the proxy: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	inner := callQuestion(t, "a2a__B", "loop back to B")
	evs := askAll(t, client.New(b.url, "", nil), client.RunRequest{UserID: "u-b", Question: callQuestion(t, "a2a__A", inner),
		ToolNames: []string{"a2a@A"}, ToolCallMode: "function_call"})
	f := finalOf(t, evs)
	if f.State != "finished" || !strings.Contains(f.Answer, "a2a@B refused") || !strings.Contains(f.Answer, "max_depth is 1") {
		t.Fatalf("B's final = %+v, want A's refusal to go deeper", f)
	}
	res := a2aResults(t, evs)
	if len(res) != 1 || res[0]["state"] != "completed" {
		t.Fatalf("B's a2a_result = %v", res)
	}
	// A's delegated run called a2a@B and got the refusal as an error
	// result, without reaching B.
	taskID, _ := res[0]["task_id"].(string)
	var refused bool
	for ev, err := range client.New(a.url, "", nil).Follow(t.Context(), "a2a", taskID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "tool_result" && strings.Contains(string(ev.Data), "refused") {
			refused = true
		}
		if ev.Type == "a2a_request" {
			t.Fatalf("A delegated to B past max_depth: %s", ev.Data)
		}
	}
	if !refused {
		t.Fatal("A's run has no refused tool_result")
	}
}
