package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

const scriptYAML = `
turns:
  - reasoning: The user wants a file.
    content: Let me read it.
    tool_calls:
      - name: read_file
        arguments: {path: "a <b>.go", lines: [1, 2]}
  - content: "Done reading. You asked: {{question}}"
    usage: {input_tokens: 100, output_tokens: 7}
`

func loadScript(t *testing.T) llm.Script {
	t.Helper()
	s, err := llm.ParseScript([]byte(scriptYAML), false)
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	return s
}

var specs = []orchestrator.ToolSpec{{Name: "read_file"}}

func user(s string) orchestrator.Message {
	return orchestrator.Message{Role: orchestrator.RoleUser, Content: s}
}
func assistant(s string) orchestrator.Message {
	return orchestrator.Message{Role: orchestrator.RoleAssistant, Content: s}
}

func TestScriptedFunctionCall(t *testing.T) {
	t.Parallel()
	m := llm.NewScripted(loadScript(t))
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{user("read a")}, Tools: specs}
	r := collect(t, context.Background(), m, req)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	want := &orchestrator.ModelResponse{
		Content:          "Let me read it.",
		ReasoningContent: "The user wants a file.",
		ToolCalls: []orchestrator.ToolCall{{ID: "call_0_0", Name: "read_file",
			Arguments: json.RawMessage(`{"lines":[1,2],"path":"a <b>.go"}`)}},
		FinishReason: "tool_calls",
		Usage:        r.Resp.Usage, // estimated, checked below
	}
	if diff := cmp.Diff(want, r.Resp); diff != "" {
		t.Errorf("round 0 (-want +got):\n%s", diff)
	}
	if r.text() != want.Content || strings.Join(r.Reasoning, "") != want.ReasoningContent {
		t.Errorf("deltas %q / %q do not add up to the response", r.Deltas, r.Reasoning)
	}
	for _, d := range append(r.Deltas, r.Reasoning...) {
		if utf8.RuneCountInString(d) > 8 {
			t.Errorf("chunk %q is longer than 8 runes", d)
		}
	}
	if u := r.Resp.Usage; u == nil || u.InputTokens == 0 || u.OutputTokens == 0 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("estimated usage = %+v", u)
	}

	req.Messages = append(req.Messages,
		orchestrator.Message{Role: orchestrator.RoleAssistant, ToolCalls: r.Resp.ToolCalls},
		orchestrator.Message{Role: orchestrator.RoleTool, ToolCallID: "call_0_0", Content: "package a"})
	r = collect(t, context.Background(), m, req)
	if r.Err != nil || r.Resp.Content != "Done reading. You asked: read a" || len(r.Resp.ToolCalls) != 0 {
		t.Fatalf("round 1 = %+v, %v", r.Resp, r.Err)
	}
	if diff := cmp.Diff(&orchestrator.Usage{InputTokens: 100, OutputTokens: 7, TotalTokens: 107}, r.Resp.Usage); diff != "" {
		t.Errorf("scripted usage (-want +got):\n%s", diff)
	}
}

func TestScriptedToolCallMode(t *testing.T) {
	t.Parallel()
	m := llm.NewScripted(loadScript(t))
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{user("read a")}}
	r := collect(t, context.Background(), m, req)
	want := `Let me read it.` + "\n" + `<tool_call>{"name":"read_file","arguments":{"lines":[1,2],"path":"a <b>.go"}}</tool_call>`
	if r.Err != nil || r.Resp.Content != want || len(r.Resp.ToolCalls) != 0 || r.text() != want {
		t.Fatalf("round 0 = %+v (deltas %q), %v; want content %q", r.Resp, r.text(), r.Err, want)
	}
	// Tool results come back as a user message that is not a question.
	req.Messages = append(req.Messages, assistant(r.Resp.Content), user("tool_response: package a"))
	r = collect(t, context.Background(), m, req)
	if r.Err != nil || r.Resp.Content != "Done reading. You asked: read a" {
		t.Fatalf("round 1 = %+v, %v", r.Resp, r.Err)
	}
}

func TestScriptedRounds(t *testing.T) {
	t.Parallel()
	script := llm.Script{Turns: []llm.Turn{
		{Content: "zero", ToolCalls: []llm.ScriptCall{{Name: "t"}}},
		{Content: "one", ToolCalls: []llm.ScriptCall{{Name: "t"}}},
	}}
	m := llm.NewScripted(script)
	cases := []struct {
		msgs  []orchestrator.Message
		want  string
		calls int
	}{
		{nil, "zero", 1},
		{[]orchestrator.Message{{Role: orchestrator.RoleSystem, Content: "sys"}, user("q")}, "zero", 1},
		{[]orchestrator.Message{user("q"), assistant("a"), user("tool_response: r")}, "one", 1},
		// A new question starts again at turn zero.
		{[]orchestrator.Message{user("q1"), assistant("a"), assistant("b"), user("q2")}, "zero", 1},
		// Past the end: the last turn's text, without tool calls.
		{[]orchestrator.Message{user("q"), assistant("a"), assistant("b"), assistant("c")}, "one", 0},
	}
	for i, tc := range cases {
		r := collect(t, context.Background(), m, &orchestrator.ModelRequest{Messages: tc.msgs, Tools: []orchestrator.ToolSpec{{Name: "t"}}})
		if r.Err != nil || r.Resp.Content != tc.want || len(r.Resp.ToolCalls) != tc.calls {
			t.Errorf("case %d: %+v, %v; want %q with %d calls", i, r.Resp, r.Err, tc.want, tc.calls)
		}
	}
}

// Runs in parallel get their own rounds: there is no state to share.
func TestScriptedConcurrent(t *testing.T) {
	t.Parallel()
	m := llm.NewScripted(llm.Script{Turns: []llm.Turn{{Content: "r0 {{question}}"}, {Content: "r1 {{question}}"}, {Content: "r2 {{question}}"}}})
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i := range 30 {
		wg.Go(func() {
			round := i % 3
			msgs := []orchestrator.Message{user(fmt.Sprint("q", i))}
			for range round {
				msgs = append(msgs, assistant("x"))
			}
			var got string
			for ev, err := range m.Generate(context.Background(), &orchestrator.ModelRequest{Messages: msgs}) {
				if err != nil {
					errs <- err
					return
				}
				if ev.Response != nil {
					got = ev.Response.Content
				}
			}
			if want := fmt.Sprintf("r%d q%d", round, i); got != want {
				errs <- fmt.Errorf("run %d: got %q, want %q", i, got, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestScriptedCancel(t *testing.T) {
	t.Parallel()
	// An hour between chunks: only cancellation ends this in time.
	m := llm.NewScripted(llm.Script{Turns: []llm.Turn{{Content: "many words to stream here", DelayMS: 3_600_000}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var deltas []string
	var gotErr error
	for ev, err := range m.Generate(ctx, &orchestrator.ModelRequest{Messages: []orchestrator.Message{user("q")}}) {
		if err != nil {
			gotErr = err
			break
		}
		deltas = append(deltas, ev.Delta)
		cancel()
	}
	if !errors.Is(gotErr, context.Canceled) || len(deltas) != 1 {
		t.Errorf("deltas %q, error %v; want one delta and context.Canceled", deltas, gotErr)
	}
	// A context cancelled up front yields only the error.
	r := collect(t, ctx, m, &orchestrator.ModelRequest{})
	if !errors.Is(r.Err, context.Canceled) || len(r.Deltas) != 0 {
		t.Errorf("cancelled up front: %+v", r)
	}
}

func TestEchoScript(t *testing.T) {
	t.Parallel()
	m, err := llm.NewModel(llm.Config{Provider: llm.ProviderScripted})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(t, context.Background(), m, question("What is wunder?"))
	if r.Err != nil || !strings.HasSuffix(r.Resp.Content, "You asked: What is wunder?") || !strings.Contains(r.Resp.Content, "scripted") {
		t.Errorf("echo = %+v, %v", r.Resp, r.Err)
	}
}

func TestLoadScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := loadScript(t)
	for _, p := range []string{
		write("map.yaml", scriptYAML),
		write("list.yml", "- reasoning: The user wants a file.\n  content: Let me read it.\n  tool_calls: [{name: read_file, arguments: {path: \"a <b>.go\", lines: [1, 2]}}]\n"+
			"- content: \"Done reading. You asked: {{question}}\"\n  usage: {input_tokens: 100, output_tokens: 7}\n"),
		write("map.json", mustJSON(want)),
		write("list.json", mustJSON(want.Turns)),
	} {
		got, err := llm.LoadScript(p)
		if err != nil {
			t.Errorf("LoadScript(%s): %v", filepath.Base(p), err)
			continue
		}
		// Numbers decode differently in YAML and JSON; compare the JSON.
		if diff := cmp.Diff(mustJSON(want), mustJSON(got)); diff != "" {
			t.Errorf("LoadScript(%s) (-want +got):\n%s", filepath.Base(p), diff)
		}
	}
	for name, body := range map[string]string{
		"empty.yaml":   "",
		"none.yaml":    "turns: []\n",
		"unknown.yaml": "turns: [{content: x, contnet: y}]\n",
		"noname.json":  `{"turns":[{"content":"x","tool_calls":[{"arguments":{}}]}]}`,
		"delay.yaml":   "- {content: x, delay_ms: -1}\n",
	} {
		if _, err := llm.LoadScript(write(name, body)); err == nil {
			t.Errorf("LoadScript(%s) accepted a bad script", name)
		}
	}
}

func TestScriptedNoTurns(t *testing.T) {
	t.Parallel()
	r := collect(t, context.Background(), llm.NewScripted(llm.Script{}), question("q"))
	if !errors.Is(r.Err, orchestrator.ErrUnavailable) {
		t.Errorf("error = %v, want ErrUnavailable", r.Err)
	}
}

// Scenarios: the question picks the turns; an unmatched question plays
// the plain turns, and a script of scenarios only fails it.
func TestScriptedScenarios(t *testing.T) {
	t.Parallel()
	script := llm.Script{
		Turns: []llm.Turn{{Content: "default"}},
		Scenarios: []llm.Scenario{
			{When: "greeting.txt", Turns: []llm.Turn{{Content: "writing", ToolCalls: []llm.ScriptCall{{Name: "write_file"}}}, {Content: "written"}}},
			{When: "capital", Turns: []llm.Turn{{Content: "Lyon"}}},
		},
	}
	if err := script.Validate(); err != nil {
		t.Fatal(err)
	}
	m := llm.NewScripted(script)
	tools := []orchestrator.ToolSpec{{Name: "write_file"}}
	for _, tc := range []struct {
		msgs []orchestrator.Message
		want string
	}{
		{[]orchestrator.Message{user("create greeting.txt")}, "writing"},
		{[]orchestrator.Message{user("create greeting.txt"), assistant("writing"), user("tool_response: ok")}, "written"},
		{[]orchestrator.Message{user("the capital of France?")}, "Lyon"},
		{[]orchestrator.Message{user("something else")}, "default"},
	} {
		r := collect(t, context.Background(), m, &orchestrator.ModelRequest{Messages: tc.msgs, Tools: tools})
		if r.Err != nil || r.Resp.Content != tc.want {
			t.Errorf("%v: %+v %v, want %q", tc.msgs, r.Resp, r.Err, tc.want)
		}
	}
	only := llm.NewScripted(llm.Script{Scenarios: script.Scenarios})
	if r := collect(t, context.Background(), only, &orchestrator.ModelRequest{Messages: []orchestrator.Message{user("nothing")}}); r.Err == nil {
		t.Error("an unmatched question with no plain turns should fail")
	}
	if err := (llm.Script{Scenarios: []llm.Scenario{{When: "x"}}}).Validate(); err == nil {
		t.Error("a scenario without turns should be invalid")
	}
}

// Scenarios match the run's metadata too (the A2A message id): every
// value must occur under its key, the first scenario that matches plays;
// a turn with repeat_while is played again while the results of its
// calls contain its text, then the script goes on.
func TestScriptedMetadataAndRepeat(t *testing.T) {
	t.Parallel()
	ask := llm.ScriptCall{Name: "ask_user", Arguments: map[string]any{"question": "more?"}}
	script := llm.Script{
		Turns: []llm.Turn{{Content: "default"}},
		Scenarios: []llm.Scenario{
			{Metadata: map[string]string{"id": "tck-file-url"}, Turns: []llm.Turn{{Content: "url"}}},
			{Metadata: map[string]string{"id": "tck-file"}, Turns: []llm.Turn{{Content: "file"}}},
			{When: "ask", Metadata: map[string]string{"id": "tck-ask"}, Turns: []llm.Turn{{ToolCalls: []llm.ScriptCall{ask}, RepeatWhile: "again"}, {Content: "done"}}},
		},
	}
	if err := script.Validate(); err != nil {
		t.Fatal(err)
	}
	m := llm.NewScripted(script)
	tools := []orchestrator.ToolSpec{{Name: "ask_user"}}
	call := assistant("")
	call.ToolCalls = []orchestrator.ToolCall{{ID: "c", Name: "ask_user", Arguments: json.RawMessage(`{}`)}}
	result := func(answer string) orchestrator.Message {
		return orchestrator.Message{Role: orchestrator.RoleTool, ToolCallID: "c", Content: `{"answer":"` + answer + `"}`}
	}
	for _, tc := range []struct {
		id   string
		msgs []orchestrator.Message
		want string // the content, or the tool called
	}{
		{"tck-file-url-1", []orchestrator.Message{user("q")}, "url"},
		{"tck-file-2", []orchestrator.Message{user("q")}, "file"},
		{"other", []orchestrator.Message{user("q")}, "default"},
		{"tck-ask-3", []orchestrator.Message{user("q")}, "default"}, // metadata alone is not enough: when too
		{"tck-ask-3", []orchestrator.Message{user("ask me")}, "ask_user"},
		{"tck-ask-3", []orchestrator.Message{user("ask me"), call, result("again, 1")}, "ask_user"},
		{"tck-ask-3", []orchestrator.Message{user("ask me"), call, result("again, 1"), call, result("again, 2")}, "ask_user"},
		{"tck-ask-3", []orchestrator.Message{user("ask me"), call, result("again, 1"), call, result("stop")}, "done"},
		{"tck-ask-3", []orchestrator.Message{user("ask me"), call, result("stop"), assistant("done"), user("tool_response: x")}, "done"},
	} {
		r := collect(t, context.Background(), m, &orchestrator.ModelRequest{Messages: tc.msgs, Tools: tools, Metadata: map[string]string{"id": tc.id}})
		got := r.Resp.Content
		if len(r.Resp.ToolCalls) > 0 {
			got = r.Resp.ToolCalls[0].Name
		}
		if r.Err != nil || got != tc.want {
			t.Errorf("%s after %d messages: %q %v, want %q", tc.id, len(tc.msgs), got, r.Err, tc.want)
		}
	}
	for name, bad := range map[string]llm.Script{
		"a scenario matching everything": {Scenarios: []llm.Scenario{{Turns: []llm.Turn{{Content: "x"}}}}},
		"repeat_while without calls":     {Turns: []llm.Turn{{Content: "x", RepeatWhile: "y"}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}

// The TCK's script (scripts/a2a-tck-model.yaml, the A2A TCK runner's
// model) loads.
func TestTCKScriptLoads(t *testing.T) {
	t.Parallel()
	s, err := llm.LoadScript(filepath.Join("..", "..", "scripts", "a2a-tck-model.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Scenarios) == 0 || len(s.Turns) == 0 {
		t.Fatalf("script %+v", s)
	}
}
