package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// loadingSet offers "slow@tool" only after WaitTool was asked for it, as an
// MCP server does once its first discovery ends; "gone@..." names a source
// that failed.
type loadingSet struct {
	mu     sync.Mutex
	loaded bool
	asked  []string
}

func (s *loadingSet) Name() string { return "loading" }

func (s *loadingSet) Tools(context.Context, string) ([]Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		return nil, nil
	}
	return stubs("slow@tool").Tools(context.Background(), "")
}

func (s *loadingSet) WaitTool(_ context.Context, name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, name)
	switch {
	case strings.HasPrefix(name, "slow@"):
		s.loaded = true
		return true, nil
	case strings.HasPrefix(name, "gone@"):
		return true, errors.New("server gone: connection refused")
	}
	return false, nil
}

func TestSelectWaitsForToolsetsStillLoading(t *testing.T) {
	ls := &loadingSet{}
	reg := NewRegistry("", nil, stubs("read_file"), ls)
	sel, err := reg.Select(context.Background(), "u", []string{"read_file", "slow__tool"}, nil)
	if err != nil {
		t.Fatalf("Select: %v", err)
	}
	if _, ok := sel.Lookup("slow@tool"); !ok {
		t.Errorf("slow@tool not selected: %v", sel.Names())
	}
	// Known names are never waited for; wire names are asked in canonical form.
	if strings.Join(ls.asked, ",") != "slow@tool" {
		t.Errorf("WaitTool asked for %q, want only slow@tool", ls.asked)
	}

	_, err = reg.Select(context.Background(), "u", []string{"gone@x", "nope"}, nil)
	if !errors.Is(err, ErrToolNotFound) || !strings.Contains(err.Error(), "gone@x (server gone: connection refused), nope") {
		t.Errorf("Select(gone@x, nope) = %v, want tool not found with the toolset's reason", err)
	}
}
