package orchestrator

import (
	"context"
	"encoding/json"
	"sync"
)

// Artifacts: what a run attaches to its result besides its answer.
//
// A tool (the builtin artifact tool) attaches a workspace file or a JSON
// value with ToolInvocation.Emit(EventArtifact, ArtifactData). The event
// is the artifact's announcement, in the run's log like any event (the
// /wunder stream, Connect, A2A artifact updates). The run keeps the
// artifacts it attached and lists them in its final event
// (FinalData.Artifacts), so a reader of a finished run reads one event,
// not its whole log; a run resumed (after a pause, or by another replica)
// reads the ones attached before from its log once.

// EventArtifact announces an artifact of the run.
const EventArtifact = "artifact"

// Artifact kinds (ArtifactData.Kind).
const (
	ArtifactFile = "file"
	ArtifactJSON = "data"
)

// MaxArtifacts bounds the artifacts of one run.
const MaxArtifacts = 32

// ArtifactData is an artifact: the data of an artifact event and an item
// of FinalData.Artifacts.
type ArtifactData struct {
	ArtifactID string `json:"artifact_id"`
	Name       string `json:"name"`
	// Kind is "file" (a workspace file: Path, Size, MediaType, SHA256,
	// and Bytes when small) or "data" (Data, a JSON value).
	Kind      string `json:"kind"`
	MediaType string `json:"media_type,omitempty"`
	// Path is the file's path in the run's user's workspace.
	Path   string `json:"path,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Bytes is the file's content when it is small enough to carry
	// inline (base64 in JSON); otherwise front-ends give its download
	// route.
	Bytes []byte          `json:"bytes,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	// Description says what it is, for the reader.
	Description string `json:"description,omitempty"`
	CallID      string `json:"call_id,omitempty"`
}

// kept collects what a run attaches to its result (its artifacts, its
// A2UI batches), listed in its final event.
type kept[T any] struct {
	mu   sync.Mutex
	list []T
}

// add records v unless max are kept already, and reports whether it did.
func (k *kept[T]) add(v T, max int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.list) >= max {
		return false
	}
	k.list = append(k.list, v)
	return true
}

// snapshot returns what is kept so far.
func (k *kept[T]) snapshot() []T {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]T(nil), k.list...)
}

// decodeAs reads an event's data (a T, a *T, or its JSON form) as a T.
func decodeAs[T any](data any) (T, bool) {
	switch v := data.(type) {
	case T:
		return v, true
	case *T:
		if v != nil {
			return *v, true
		}
	default:
		var out T
		if json.Unmarshal(rawJSON(data), &out) == nil {
			return out, true
		}
	}
	var zero T
	return zero, false
}

// keep records what a tool emits for the run's result (artifact and a2ui
// events) and reports whether the event goes into the log: not when it is
// malformed or over its bound.
func (lr *liveRun) keep(eventType string, data any) bool {
	switch eventType {
	case EventArtifact:
		ad, ok := decodeAs[ArtifactData](data)
		return ok && ad.ArtifactID != "" && lr.artifacts.add(ad, MaxArtifacts)
	case EventA2UI:
		ud, ok := decodeAs[A2UIData](data)
		return ok && ud.ID != "" && len(ud.Messages) > 0 && lr.a2ui.add(ud, MaxA2UI)
	}
	return true
}

// loadArtifacts reads the artifacts (and A2UI batches) a resumed run
// attached before, from its log up to seq upTo.
func (o *Orchestrator) loadArtifacts(ctx context.Context, lr *liveRun, upTo int64) {
	for after := int64(0); after < upTo; {
		evs, err := o.store.ListEvents(ctx, lr.id, after, 1000)
		if err != nil || len(evs) == 0 {
			if err != nil {
				o.log.Warn("artifacts of a resumed run not read; its final event lists the new ones only", "run_id", lr.id, "err", err)
			}
			return
		}
		for _, ev := range evs {
			if ev.Seq > upTo {
				return
			}
			if ev.Type == EventArtifact || ev.Type == EventA2UI {
				lr.keep(ev.Type, ev.Data)
			}
		}
		after = evs[len(evs)-1].Seq
	}
}
