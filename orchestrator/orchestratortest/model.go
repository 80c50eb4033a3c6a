// Package orchestratortest holds test doubles for the orchestrator's
// interfaces (the scripted model, under the names its tests know, of
// internal/testutil/fakemodel; tools built from functions; an in-memory
// store) and the shared contract suites every implementation passes
// (RunStoreTests).
package orchestratortest

import (
	"fmt"

	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// Turn is one scripted model answer ([fakemodel.Turn]).
type Turn = fakemodel.Turn

// ScriptedModel is wunder's one fake model ([fakemodel.Model]); made by
// [NewScriptedModel], it answers with its turns in order, one per Generate
// call, across all runs; past the end it repeats the last turn. It records
// every request (Requests).
type ScriptedModel = fakemodel.Model

// NewScriptedModel returns a model that plays turns ([fakemodel.Script]).
func NewScriptedModel(turns ...Turn) *ScriptedModel { return fakemodel.Script(turns...) }

// Models serves one model under any name.
type Models struct {
	Model    orchestrator.Model
	Settings orchestrator.ModelSettings
}

// Lookup implements orchestrator.Models.
func (m Models) Lookup(name string) (orchestrator.Model, orchestrator.ModelSettings, error) {
	if m.Model == nil {
		return nil, orchestrator.ModelSettings{}, fmt.Errorf("%w: no model configured", orchestrator.ErrUnavailable)
	}
	s := m.Settings
	if s.Name == "" {
		s.Name = "scripted"
	}
	return m.Model, s, nil
}

// Call is a shorthand for a tool call with JSON arguments.
func Call(name, args string) orchestrator.ToolCall {
	return orchestrator.ToolCall{Name: name, Arguments: []byte(args)}
}
