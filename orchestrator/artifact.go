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

// artifacts collects a run's artifacts.
type artifacts struct {
	mu   sync.Mutex
	list []ArtifactData
}

// add records data (an ArtifactData, or its JSON form) and reports
// whether it is one.
func (a *artifacts) add(data any) bool {
	var ad ArtifactData
	switch v := data.(type) {
	case ArtifactData:
		ad = v
	case *ArtifactData:
		ad = *v
	default:
		if json.Unmarshal(rawJSON(data), &ad) != nil {
			return false
		}
	}
	if ad.ArtifactID == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.list = append(a.list, ad)
	return true
}

// snapshot returns the artifacts so far.
func (a *artifacts) snapshot() []ArtifactData {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ArtifactData(nil), a.list...)
}

// count is how many the run attached.
func (a *artifacts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.list)
}

// loadArtifacts reads the artifacts a resumed run attached before, from
// its log up to seq upTo.
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
			if ev.Type == EventArtifact {
				var ad ArtifactData
				if json.Unmarshal(ev.Data, &ad) == nil {
					lr.artifacts.add(ad)
				}
			}
		}
		after = evs[len(evs)-1].Seq
	}
}
