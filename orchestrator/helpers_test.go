package orchestrator_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// harness is an orchestrator over an in-memory store and a scripted model.
type harness struct {
	o     *orchestrator.Orchestrator
	store orchestrator.Store
	model *orchestratortest.ScriptedModel
	files *orchestratortest.Files
}

type harnessOpts struct {
	opts     orchestrator.Options
	mode     string
	store    orchestrator.Store
	toolsets []orchestrator.Toolset
	turns    []orchestratortest.Turn
	// settings, when set, replaces the model settings (Name and
	// ToolCallMode keep their defaults when empty).
	settings *orchestrator.ModelSettings
}

func newHarness(t *testing.T, ho harnessOpts) *harness {
	t.Helper()
	h := &harness{store: ho.store, model: orchestratortest.NewScriptedModel(ho.turns...), files: orchestratortest.NewFiles()}
	if h.store == nil {
		h.store = orchestratortest.NewMemStore()
	}
	sets := append([]orchestrator.Toolset{h.files.Toolset()}, ho.toolsets...)
	reg := orchestrator.NewRegistry("", nil, sets...)
	mode := ho.mode
	if mode == "" {
		mode = orchestrator.ModeToolCall
	}
	settings := orchestrator.ModelSettings{Name: "scripted", ToolCallMode: mode, MaxRounds: 6, Stream: true}
	if ho.settings != nil {
		settings = *ho.settings
		settings.Name, settings.ToolCallMode = "scripted", mode
	}
	models := orchestratortest.Models{Model: h.model, Settings: settings}
	opts := ho.opts
	h.o = orchestrator.New(h.store, models, reg, &opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.o.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// collect follows a run to its end and returns its events.
func collect(t *testing.T, o *orchestrator.Orchestrator, runID string, after int64) []orchestrator.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var out []orchestrator.Event
	for ev, err := range o.Events(ctx, "", runID, after) {
		if err != nil {
			t.Fatalf("Events(%s, after %d): %v", runID, after, err)
		}
		out = append(out, ev)
	}
	return out
}

// final returns the final event's payload, failing when it is not last.
func final(t *testing.T, evs []orchestrator.Event) orchestrator.FinalData {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != orchestrator.EventFinal {
		t.Fatalf("last event is not final: %v", types(evs))
	}
	var f orchestrator.FinalData
	if err := json.Unmarshal(evs[len(evs)-1].Data, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func types(evs []orchestrator.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func ofType(evs []orchestrator.Event, typ string) []orchestrator.Event {
	var out []orchestrator.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// assertDense checks seqs run first, first+1, ... without gap or duplicate.
func assertDense(t *testing.T, evs []orchestrator.Event, first int64) {
	t.Helper()
	for i, e := range evs {
		if want := first + int64(i); e.Seq != want {
			t.Fatalf("event %d (%s) has seq %d, want %d", i, e.Type, e.Seq, want)
		}
	}
}

func mustStart(t *testing.T, o *orchestrator.Orchestrator, req orchestrator.RunRequest) *orchestrator.Run {
	t.Helper()
	r, err := o.Start(t.Context(), req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return r
}

// blockingTool waits until its context ends or release is closed; started
// is closed when it begins.
func blockingTool(name string, started chan struct{}, release <-chan struct{}) orchestrator.Toolset {
	tool := orchestratortest.NewTool(name, false, func(ctx context.Context, _ *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		close(started)
		select {
		case <-release:
			return &orchestrator.ToolResult{Content: "released"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return orchestrator.StaticToolset{SetName: "block", List: []orchestrator.Tool{tool}}
}
