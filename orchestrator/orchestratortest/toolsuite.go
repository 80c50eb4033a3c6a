package orchestratortest

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wunder/wunder/orchestrator"
)

// RunToolsetTests is the contract every tool source passes (after adk-go's
// session/sessiontestsuite): valid specs whose input schemas compile,
// deterministic and concurrency-safe listing, malformed arguments answered
// with an error result (never a panic or a Go error), prompt return on a
// cancelled context, and, through [WithIsolation], per-user isolation.
//
// newToolset is called once per subtest; it registers its own cleanup.
func RunToolsetTests(t *testing.T, newToolset func(t *testing.T) orchestrator.Toolset, opts ...ToolsetOption) {
	t.Helper()
	cfg := toolsetConfig{userA: "alice", userB: "bob", minTools: 1}
	for _, o := range opts {
		o(&cfg)
	}
	t.Run("Specs", func(t *testing.T) { testSpecs(t, newToolset(t), &cfg) })
	t.Run("Deterministic", func(t *testing.T) { testDeterministic(t, newToolset(t), &cfg) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrentTools(t, newToolset(t), &cfg) })
	t.Run("MalformedArguments", func(t *testing.T) { testMalformed(t, newToolset(t), &cfg) })
	t.Run("CancelledContext", func(t *testing.T) { testCancelled(t, newToolset(t), &cfg) })
	if cfg.blocking != nil {
		t.Run("CancelBlockingCall", func(t *testing.T) { testCancelBlocking(t, newToolset(t), &cfg) })
	}
	if cfg.isolation != nil {
		t.Run("Isolation", func(t *testing.T) { cfg.isolation(t, newToolset(t), cfg.userA, cfg.userB) })
	}
}

// ToolsetOption adjusts [RunToolsetTests].
type ToolsetOption func(*toolsetConfig)

type toolsetConfig struct {
	userA, userB string
	minTools     int
	skip         []string
	bareString   []string
	blocking     *blockingCall
	isolation    func(t *testing.T, ts orchestrator.Toolset, userA, userB string)
}

type blockingCall struct {
	name string
	args json.RawMessage
}

// WithUsers sets the two users the suite works as (default alice and bob).
func WithUsers(a, b string) ToolsetOption {
	return func(c *toolsetConfig) { c.userA, c.userB = a, b }
}

// WithMinTools sets how many tools a user must at least see (default 1).
func WithMinTools(n int) ToolsetOption { return func(c *toolsetConfig) { c.minTools = n } }

// WithoutCalls names tools the suite lists but never calls (e.g. ones whose
// calls need a peer the test does not provide).
func WithoutCalls(names ...string) ToolsetOption {
	return func(c *toolsetConfig) { c.skip = append(c.skip, names...) }
}

// WithBareString names tools that accept a bare JSON string as their
// argument on purpose (final_response, as the original wunder did).
func WithBareString(names ...string) ToolsetOption {
	return func(c *toolsetConfig) { c.bareString = append(c.bareString, names...) }
}

// WithBlockingCall names a call that writes output and then blocks until
// its context ends; the suite cancels it at its first output and checks
// that it returns an error result or the context's error.
func WithBlockingCall(name string, args json.RawMessage) ToolsetOption {
	return func(c *toolsetConfig) { c.blocking = &blockingCall{name: name, args: args} }
}

// WithIsolation adds a per-user isolation check for toolsets whose tools
// are bound to the user.
func WithIsolation(fn func(t *testing.T, ts orchestrator.Toolset, userA, userB string)) ToolsetOption {
	return func(c *toolsetConfig) { c.isolation = fn }
}

// hangBound only detects a call that never returns; it is no performance
// budget.
const hangBound = 30 * time.Second

// toolName is the registry's rule for canonical names: ASCII letters,
// digits, '_', '-', '.', and '@' between parts.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*(@[A-Za-z0-9_][A-Za-z0-9_.-]*)*$`)

func listTools(t *testing.T, ts orchestrator.Toolset, user string) []orchestrator.Tool {
	t.Helper()
	tools, err := ts.Tools(context.Background(), user)
	if err != nil {
		t.Fatalf("%s.Tools(%q) error: %v", ts.Name(), user, err)
	}
	return tools
}

func testSpecs(t *testing.T, ts orchestrator.Toolset, cfg *toolsetConfig) {
	if ts.Name() == "" {
		t.Error("Name() is empty")
	}
	tools := listTools(t, ts, cfg.userA)
	if len(tools) < cfg.minTools {
		t.Fatalf("Tools() returned %d tools, want at least %d", len(tools), cfg.minTools)
	}
	reg := orchestrator.NewRegistry("", nil)
	wires := map[string]string{}
	for _, tool := range tools {
		s := tool.Spec()
		if !toolName.MatchString(s.Name) || len(s.Name) > 128 {
			t.Errorf("tool name %q breaks the registry's rules (%s, at most 128 bytes)", s.Name, toolName)
		}
		if w := reg.WireName(s.Name); wires[w] != "" {
			t.Errorf("tools %q and %q share the wire name %q", wires[w], s.Name, w)
		} else {
			wires[w] = s.Name
		}
		if strings.TrimSpace(s.Description) == "" {
			t.Errorf("tool %q has no description", s.Name)
		}
		if s.Source == "" {
			t.Errorf("tool %q has no source", s.Name)
		}
		for _, a := range s.Aliases {
			if strings.TrimSpace(a) != a || a == "" {
				t.Errorf("tool %q: alias %q is empty or padded", s.Name, a)
			}
		}
		if _, err := compileSchema(s.InputSchema); err != nil {
			t.Errorf("tool %q: input schema: %v", s.Name, err)
		}
	}
}

// compileSchema checks that raw is a JSON Schema of an object that
// resolves, and returns it.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("type is %q, want \"object\"", s.Type)
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	return &s, nil
}

// specKey renders the sorted specs, for comparing two listings.
func specKey(tools []orchestrator.Tool) string {
	specs := make([]orchestrator.ToolSpec, len(tools))
	for i, tool := range tools {
		specs[i] = tool.Spec()
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	b, _ := json.Marshal(specs)
	return string(b)
}

func testDeterministic(t *testing.T, ts orchestrator.Toolset, cfg *toolsetConfig) {
	first := specKey(listTools(t, ts, cfg.userA))
	for i := range 3 {
		if got := specKey(listTools(t, ts, cfg.userA)); got != first {
			t.Fatalf("listing %d differs from the first:\n got %s\nwant %s", i+2, got, first)
		}
	}
}

func testConcurrentTools(t *testing.T, ts orchestrator.Toolset, cfg *toolsetConfig) {
	want := specKey(listTools(t, ts, cfg.userA))
	var wg sync.WaitGroup
	got := make([]string, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tools, err := ts.Tools(context.Background(), cfg.userA)
			got[i], errs[i] = specKey(tools), err
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != want {
			t.Errorf("concurrent listing %d: err %v, differs from a serial one: %v", i, errs[i], got[i] != want)
		}
	}
}

// invocation returns a ToolInvocation as the loop builds it.
func invocation(user string, args json.RawMessage) *orchestrator.ToolInvocation {
	return &orchestrator.ToolInvocation{
		UserID: user, SessionID: "sess_suite", RunID: "run_suite", CallID: "call_suite",
		Arguments: args, Output: func(string, string) {}, Emit: func(string, any) {},
	}
}

// callSafely calls tool, turning a panic into a test error and a hang
// into a fatal one.
func callSafely(t *testing.T, ctx context.Context, tool orchestrator.Tool, inv *orchestrator.ToolInvocation) (res *orchestrator.ToolResult, err error, ok bool) {
	t.Helper()
	type out struct {
		res *orchestrator.ToolResult
		err error
		p   any
	}
	done := make(chan out, 1)
	go func() {
		var o out
		defer func() {
			o.p = recover()
			done <- o
		}()
		o.res, o.err = tool.Call(ctx, inv)
	}()
	select {
	case o := <-done:
		if o.p != nil {
			t.Errorf("%s(%s) panicked: %v", tool.Spec().Name, inv.Arguments, o.p)
			return nil, nil, false
		}
		return o.res, o.err, true
	case <-time.After(hangBound):
		t.Fatalf("%s(%s) did not return within %v", tool.Spec().Name, inv.Arguments, hangBound)
		return nil, nil, false
	}
}

func (c *toolsetConfig) callable(tools []orchestrator.Tool) []orchestrator.Tool {
	var out []orchestrator.Tool
	for _, tool := range tools {
		if !slices.Contains(c.skip, tool.Spec().Name) {
			out = append(out, tool)
		}
	}
	return out
}
