package a2a

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// Artifacts over A2A (orchestrator/artifact.go): each artifact a run
// attaches is an artifact of its task beside the answer. A file travels
// as a FilePart: its bytes when the artifact carries them (small files),
// else a URL of GET /wunder/workspace/download that the caller fetches
// with their own credentials (absolute under Options.PublicURL). A JSON
// value is a DataPart (an object as is; any other value as {"value": …}).
// A stream gets each as an artifact update when the run attaches it; a
// task read later lists them from the run's final event.

// artifactOf is a run's artifact as an A2A artifact.
func (h *Handler) artifactOf(userID string, ad orchestrator.ArtifactData) w.Artifact {
	a := w.Artifact{ArtifactID: ad.ArtifactID, Name: ad.Name, Description: ad.Description}
	switch ad.Kind {
	case orchestrator.ArtifactFile:
		p := w.Part{Kind: "file", MediaType: ad.MediaType, Filename: ad.Name}
		if ad.Bytes != nil {
			p.Raw = ad.Bytes
		} else {
			p.URL = h.downloadURL(userID, ad.Path)
		}
		a.Parts = []w.Part{p}
	default:
		data := ad.Data
		if t := strings.TrimSpace(string(data)); !strings.HasPrefix(t, "{") {
			data, _ = json.Marshal(map[string]json.RawMessage{"value": ad.Data})
		}
		a.Parts = []w.Part{{Kind: "data", Data: data, MediaType: ad.MediaType}}
	}
	return a
}

// downloadURL is where the caller downloads a workspace file of userID.
func (h *Handler) downloadURL(userID, path string) string {
	q := url.Values{"path": {path}}
	if userID != "" {
		q.Set("user_id", userID)
	}
	return strings.TrimRight(h.opts.PublicURL, "/") + "/wunder/workspace/download?" + q.Encode()
}

// finalOf reads the final event of a finished run (its artifacts are
// there); nil when the log no longer holds it.
func (h *Handler) finalOf(ctx context.Context, userID string, r *orchestrator.Run) *orchestrator.FinalData {
	if r.LastSeq < 1 {
		return nil
	}
	for ev, err := range h.b.Events(ctx, userID, r.ID, r.LastSeq-1) {
		if err != nil || ev.Type != orchestrator.EventFinal {
			return nil
		}
		var f orchestrator.FinalData
		if json.Unmarshal(ev.Data, &f) != nil {
			return nil
		}
		return &f
	}
	return nil
}
