package orchestratortest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wunder/wunder/orchestrator"
)

// malformedCase is one bad argument list and whether the tool must answer
// it with an error result.
type malformedCase struct {
	what      string
	args      json.RawMessage
	mustError bool
}

// malformedCases derives bad arguments from a tool's schema: not an object
// at all, required properties missing, required properties of the wrong
// type.
func malformedCases(schema *jsonschema.Schema) []malformedCase {
	cases := []malformedCase{
		{"an array", json.RawMessage(`[1,2]`), true},
		{"a string", json.RawMessage(`"hello"`), true},
		{"a number", json.RawMessage(`42`), true},
		{"truncated JSON", json.RawMessage(`{"a":`), true},
	}
	if len(schema.Required) > 0 {
		cases = append(cases, malformedCase{"no required property", json.RawMessage(`{}`), true})
		wrong := map[string]any{}
		for _, name := range schema.Required {
			if p := schema.Properties[name]; p != nil {
				wrong[name] = wrongValue(p)
			}
		}
		if b, err := json.Marshal(wrong); err == nil && len(wrong) == len(schema.Required) {
			cases = append(cases, malformedCase{"required properties of the wrong type", b, true})
		}
	} else {
		// Nothing is required: {} may be fine, but it must not break.
		cases = append(cases, malformedCase{"an empty object", json.RawMessage(`{}`), false})
	}
	return cases
}

// wrongValue returns a value of another type than p allows.
func wrongValue(p *jsonschema.Schema) any {
	types := p.Types
	if p.Type != "" {
		types = append(types, p.Type)
	}
	for _, ty := range types {
		if ty == "string" {
			return map[string]any{"not": "a string"}
		}
	}
	return "not the right type"
}

func testMalformed(t *testing.T, ts orchestrator.Toolset, cfg *toolsetConfig) {
	for _, tool := range cfg.callable(listTools(t, ts, cfg.userA)) {
		spec := tool.Spec()
		schema, err := compileSchema(spec.InputSchema)
		if err != nil {
			continue // reported by Specs
		}
		for _, c := range malformedCases(schema) {
			if c.what == "a string" && slices.Contains(cfg.bareString, spec.Name) {
				c.mustError = false
			}
			ctx, cancel := context.WithTimeout(context.Background(), hangBound)
			res, err, ok := callSafely(t, ctx, tool, invocation(cfg.userA, c.args))
			cancel()
			switch {
			case !ok:
			case err != nil:
				t.Errorf("%s with %s (%s): Go error %v, want an error result the model can read", spec.Name, c.what, c.args, err)
			case res == nil:
				t.Errorf("%s with %s (%s): nil result", spec.Name, c.what, c.args)
			case c.mustError && !res.IsError:
				t.Errorf("%s with %s (%s): result %q is not an error", spec.Name, c.what, c.args, res.Content)
			case res.IsError && res.Content == "":
				t.Errorf("%s with %s (%s): empty error result", spec.Name, c.what, c.args)
			}
		}
	}
}

// testCancelled calls every tool with a context cancelled beforehand: the
// call must return (a result or the context's error), not hang or panic.
func testCancelled(t *testing.T, ts orchestrator.Toolset, cfg *toolsetConfig) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range cfg.callable(listTools(t, ts, cfg.userA)) {
		res, err, ok := callSafely(t, ctx, tool, invocation(cfg.userA, json.RawMessage(`{}`)))
		if ok && err == nil && res == nil {
			t.Errorf("%s with a cancelled context: nil result and nil error", tool.Spec().Name)
		}
	}
}

// testCancelBlocking starts the configured blocking call, cancels it once
// it runs and checks that it returns.
func testCancelBlocking(t *testing.T, ts orchestrator.Toolset, cfg *toolsetConfig) {
	var tool orchestrator.Tool
	for _, tl := range listTools(t, ts, cfg.userA) {
		if tl.Spec().Name == cfg.blocking.name {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatalf("no tool %q to block on", cfg.blocking.name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inv := invocation(cfg.userA, cfg.blocking.args)
	var once sync.Once
	started := false
	// The call is under way once it writes output: cancel then.
	inv.Output = func(string, string) { once.Do(func() { started = true; cancel() }) }
	res, err, ok := callSafely(t, ctx, tool, inv)
	cancel()
	if ok && !started {
		t.Fatalf("%s never wrote output, so it was never under way: %+v, %v", cfg.blocking.name, res, err)
	}
	if ok && err == nil && (res == nil || !res.IsError) {
		t.Errorf("%s cancelled: result %+v, want an error result or the context's error", cfg.blocking.name, res)
	}
}
