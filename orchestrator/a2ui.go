package orchestrator

import "encoding/json"

// A2UI: the interactive UI a run sends to its user (A2UI v0.9,
// https://a2ui.org), beside its answer.
//
// A tool (the builtin a2ui tool) checks a batch of A2UI messages and
// sends it with ToolInvocation.Emit(EventA2UI, A2UIData). Like an
// artifact (artifact.go), the event is in the run's log (the /wunder
// stream and the console render it; A2A carries it as an artifact of
// DataParts, or as its text to a client that did not activate the
// extension), and the run lists its batches in its final event
// (FinalData.A2UI). The core does not read the messages.

// EventA2UI announces a batch of A2UI messages of the run.
const EventA2UI = "a2ui"

// MaxA2UI bounds the A2UI batches of one run.
const MaxA2UI = 64

// A2UIData is a batch of A2UI messages: the data of an a2ui event and an
// item of FinalData.A2UI.
type A2UIData struct {
	// ID names the batch (an A2A artifact's id).
	ID string `json:"id"`
	// Messages is the JSON list of A2UI server-to-client messages
	// (createSurface, updateComponents, updateDataModel, deleteSurface),
	// each with "version": "v0.9".
	Messages json.RawMessage `json:"messages"`
	// Surfaces are the surface ids the messages touch.
	Surfaces []string `json:"surfaces,omitempty"`
	// Text is the batch rendered as plain text, for a client that cannot
	// render A2UI.
	Text   string `json:"text,omitempty"`
	CallID string `json:"call_id,omitempty"`
}
