package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// The model is streamed when the caller reads the answer as it grows, and
// asked for its whole answer when the caller takes it only whole (unless
// the model's stream_always says otherwise): through POST /wunder with and
// without stream, A2A's SendMessage (blocking or not) and
// SendStreamingMessage, whose streams carry the answer as one artifact at
// the end, and wunder@run with and without a progress token. The fake model counts
// the requests that asked for a stream; a run not streamed has no
// llm_output_delta event, and its answer is the same.
func TestModelStreamedOnlyForStreamingCallers(t *testing.T) {
	a2a := func(method string, params ...string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}` +
			strings.Join(params, "") + `}}`
	}
	v1 := map[string]string{"A2A-Version": "1.0"}
	for _, tc := range []struct {
		name     string
		always   bool
		do       func(t *testing.T, s *server) string // returns the response body
		streamed bool
	}{
		{"POST /wunder stream:false", false, func(t *testing.T, s *server) string {
			return body(t, s.rest(t, "POST", "/wunder", `{"user_id":"ann","question":"hello","stream":false}`, nil))
		}, false},
		{"POST /wunder SSE", false, func(t *testing.T, s *server) string {
			return body(t, s.rest(t, "POST", "/wunder", `{"user_id":"ann","question":"hello"}`, nil))
		}, true},
		{"A2A SendMessage (blocking)", false, func(t *testing.T, s *server) string {
			return body(t, s.rest(t, "POST", "/a2a", a2a("SendMessage"), v1))
		}, false},
		// An A2A stream carries statuses and the answer as one artifact
		// at the end, never its text as it grows.
		{"A2A SendStreamingMessage", false, func(t *testing.T, s *server) string {
			return body(t, s.rest(t, "POST", "/a2a", a2a("SendStreamingMessage"), v1))
		}, false},
		{"A2A SendMessage returning at once", false, func(t *testing.T, s *server) string {
			body(t, s.rest(t, "POST", "/a2a", a2a("SendMessage", `,"configuration":{"returnImmediately":true}`), v1))
			return answerOfTheRun(t, s)
		}, false},
		{"A2A SendStreamingMessage, stream_always", true, func(t *testing.T, s *server) string {
			return body(t, s.rest(t, "POST", "/a2a", a2a("SendStreamingMessage"), v1))
		}, true},
		{"wunder@run", false, func(t *testing.T, s *server) string {
			return mcpRun(t, s, false)
		}, false},
		{"wunder@run with a progress token", false, func(t *testing.T, s *server) string {
			return mcpRun(t, s, true)
		}, true},
		{"A2A SendMessage, stream_always", true, func(t *testing.T, s *server) string {
			return body(t, s.rest(t, "POST", "/a2a", a2a("SendMessage"), v1))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, func(c *config.Config) {
				m := c.LLM.Models["fake"]
				m.StreamAlways = tc.always
				c.LLM.Models["fake"] = m
			})
			out := tc.do(t, s)
			if !strings.Contains(out, "echo: hello") {
				t.Fatalf("the answer is missing from the response:\n%s", out)
			}
			if n, streamed := s.fake.Requests.Load(), s.fake.Streamed.Load(); n != 1 || (streamed == 1) != tc.streamed {
				t.Fatalf("model requests %d, streamed %d; want 1, streamed %v", n, streamed, tc.streamed)
			}
			// The run's stored log: deltas exactly when streamed.
			runs, err := s.app.store.ListRuns(t.Context(), orchestrator.RunFilter{})
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs = %v, %v; want one", runs, err)
			}
			evs, err := s.app.store.ListEvents(t.Context(), runs[0].ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			deltas := 0
			for _, e := range evs {
				if e.Type == orchestrator.EventLLMOutputDelta {
					deltas++
				}
			}
			if (deltas > 0) != tc.streamed || evs[len(evs)-1].Type != orchestrator.EventFinal {
				t.Fatalf("%d llm_output_delta events in a log of %d ending in %s; want deltas: %v", deltas, len(evs), evs[len(evs)-1].Type, tc.streamed)
			}
		})
	}
}

// answerOfTheRun follows the server's only run to its end and returns
// its answer.
func answerOfTheRun(t *testing.T, s *server) string {
	t.Helper()
	runs, err := s.app.store.ListRuns(t.Context(), orchestrator.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %v, %v; want one", runs, err)
	}
	for _, err := range s.app.orch.Events(t.Context(), "", runs[0].ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.app.orch.GetRun(t.Context(), "", runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return r.Answer
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("%d %s: %v", r.StatusCode, b, err)
	}
	return string(b)
}

// mcpRun calls wunder@run with the task "hello" and returns its text.
func mcpRun(t *testing.T, s *server, progress bool) string {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "stream-mode", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {}})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "hello"}}
	if progress {
		params.SetProgressToken("p")
	}
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("wunder@run: %v %+v", err, res)
	}
	var out strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.WriteString(tc.Text)
		}
	}
	return out.String()
}
