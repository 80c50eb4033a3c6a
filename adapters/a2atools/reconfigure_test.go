package a2atools_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/a2atools"
)

func toolNames(t *testing.T, s *a2atools.Set) []string {
	t.Helper()
	tools, err := s.Tools(t.Context(), "u")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	return names
}

// Reconfigure keeps the tool (and the card it read) of a service whose
// settings did not change, replaces a changed one, drops a removed one,
// and changes nothing when the new list is invalid; with no services left
// there are no tools at all, not even a2a_observe and a2a_wait.
func TestReconfigure(t *testing.T) {
	t.Parallel()
	agent := serveAgent(t, goEcho{}, true, nil)
	s := newSet(t,
		a2atools.Service{Name: "keep", URL: agent.url},
		a2atools.Service{Name: "change", URL: agent.url, Description: "before"},
		a2atools.Service{Name: "drop", URL: agent.url},
	)
	if got := toolNames(t, s); !slices.Equal(got, []string{"a2a@keep", "a2a@change", "a2a@drop", "a2a_observe", "a2a_wait"}) {
		t.Fatalf("tools %v", got)
	}
	keep, change := toolNamed(t, s, "a2a@keep"), toolNamed(t, s, "a2a@change")
	if res, err := keep.Call(t.Context(), invocation(`{"message":"warm"}`, &recorder{}, nil)); err != nil || res.IsError {
		t.Fatalf("first call: %+v %v", res, err)
	}
	cards := agent.cards.Load()

	// An explicit default (the timeout, max_depth) is the same setting as
	// leaving it unset.
	err := s.Reconfigure([]a2atools.Service{
		{Name: "keep", URL: agent.url, Timeout: 120 * time.Second, MaxDepth: 3},
		{Name: "change", URL: agent.url, Description: "after"},
		{Name: "added", URL: agent.url},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, s); !slices.Equal(got, []string{"a2a@keep", "a2a@change", "a2a@added", "a2a_observe", "a2a_wait"}) {
		t.Fatalf("tools after reconfigure %v", got)
	}
	if toolNamed(t, s, "a2a@keep") != keep {
		t.Error("the unchanged service got a new tool")
	}
	if nc := toolNamed(t, s, "a2a@change"); nc == change || !strings.Contains(nc.Spec().Description, "after") {
		t.Errorf("the changed service kept its tool (%q)", nc.Spec().Description)
	}
	if _, err := toolNamed(t, s, "a2a@keep").Call(t.Context(), invocation(`{"message":"again"}`, &recorder{}, nil)); err != nil || agent.cards.Load() != cards {
		t.Errorf("the kept tool read the card again (%d reads, was %d): %v", agent.cards.Load(), cards, err)
	}
	// A run that holds the old tool of a changed service still calls it.
	if res, err := change.Call(t.Context(), invocation(`{"message":"old tool"}`, &recorder{}, nil)); err != nil || res.IsError || !strings.HasPrefix(res.Content, "echo: old tool") {
		t.Errorf("the replaced tool: %+v %v", res, err)
	}

	before := toolNames(t, s)
	for _, bad := range [][]a2atools.Service{
		{{Name: "twice", URL: agent.url}, {Name: "twice", URL: agent.url}},
		{{Name: "bad name", URL: agent.url}},
		{{Name: "", URL: agent.url}},
		{{Name: strings.Repeat("n", 65), URL: agent.url}},
	} {
		if err := s.Reconfigure(bad); err == nil || !strings.Contains(err.Error(), "must be unique") {
			t.Errorf("Reconfigure(%v) = %v, want the name refused", bad, err)
		}
		if got := toolNames(t, s); !slices.Equal(got, before) {
			t.Errorf("a refused reconfigure changed the tools to %v", got)
		}
	}

	if err := s.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, s); len(got) != 0 {
		t.Errorf("no services, tools %v", got)
	}
}

// New refuses what Reconfigure refuses, and every tool's spec is one the
// registry takes: a name of its own, an object schema, a2a as its source.
func TestNewServicesAndSpecs(t *testing.T) {
	t.Parallel()
	if _, err := a2atools.New([]a2atools.Service{{Name: "a/b", URL: "http://x"}}, nil); err == nil {
		t.Error("New took the name a/b")
	}
	s := newSet(t, a2atools.Service{Name: "one", URL: "http://127.0.0.1:9"}, a2atools.Service{Name: "two", URL: "http://127.0.0.1:9", Description: "the second"})
	tools, _ := s.Tools(t.Context(), "anyone")
	seen := map[string]bool{}
	for _, tl := range tools {
		sp := tl.Spec()
		if seen[sp.Name] || !strings.Contains(string(sp.InputSchema), `"type":"object"`) {
			t.Errorf("spec %+v", sp)
		}
		seen[sp.Name] = true
		if strings.HasPrefix(sp.Name, "a2a@") && sp.Source != "a2a" {
			t.Errorf("%s: source %q", sp.Name, sp.Source)
		}
	}
	if d := toolNamed(t, s, "a2a@one").Spec().Description; !strings.Contains(d, "a peer agent") {
		t.Errorf("a service without a description: %q", d)
	}
	if d := toolNamed(t, s, "a2a@two").Spec().Description; !strings.Contains(d, "the second") {
		t.Errorf("a service's description: %q", d)
	}
}
