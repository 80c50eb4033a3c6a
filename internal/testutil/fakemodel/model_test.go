package fakemodel

import (
	"context"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// answer is the content of the model's answer to q, or its error.
func answer(m *Model, q string) string {
	for ev, err := range m.Generate(context.Background(), &orchestrator.ModelRequest{Messages: []orchestrator.Message{user(q)}}) {
		if err != nil {
			return "error: " + err.Error()
		}
		if ev.Response != nil {
			return ev.Response.Content
		}
	}
	return "no response"
}

// A script plays its turns in order and then repeats the last; the log
// keeps every request until taken, and none once turned off.
func TestScriptAndLog(t *testing.T) {
	m := Script(Turn{Content: "one"}, Turn{Content: "two"})
	for i, want := range []string{"one", "two", "two"} {
		if got := answer(m, "q"); got != want {
			t.Fatalf("call %d: %q, want %q", i, got, want)
		}
	}
	if n := len(m.Take()); n != 3 {
		t.Fatalf("took %d requests, want 3", n)
	}
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("%d requests after Take", n)
	}
	if got := answer(Script(), "q"); got != "" {
		t.Fatalf("empty script: %q", got)
	}
	m = Directives().NoLog()
	answer(m, "q")
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("NoLog kept %d requests", n)
	}
}

// Hold holds what it matches until released; Hold(nil) holds no more.
func TestHold(t *testing.T) {
	m := Directives()
	m.Hold(func(r *orchestrator.ModelRequest) bool { q, _ := Conversation(r); return q == "wait" })
	if got := answer(m, "go"); got != "echo: go" {
		t.Fatalf("unmatched call: %q", got)
	}
	done := make(chan string)
	go func() { done <- answer(m, "wait") }()
	<-m.Held()
	m.Release()
	if got := <-done; got != "echo: wait" {
		t.Fatalf("released call: %q", got)
	}
	m.Hold(nil)
	if got := answer(m, "wait"); got != "echo: wait" {
		t.Fatalf("after Hold(nil): %q", got)
	}
}
