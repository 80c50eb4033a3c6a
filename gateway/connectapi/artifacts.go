package connectapi

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
)

// Artifacts over Connect (orchestrator/artifact.go): what a run attaches
// to its result is a message of its own, wunder.v1.Artifact. An artifact
// event carries the one it announces, the final event every one the run
// attached (Event.artifacts, beside data's JSON); a run read once it ended
// lists them (Run.artifacts, from its final event). A file travels with
// its bytes when small, and always with the URI of its download route,
// which the caller fetches with their own credentials.

var artifactKinds = map[string]wunderv1.ArtifactKind{
	orchestrator.ArtifactFile: wunderv1.ArtifactKind_ARTIFACT_KIND_FILE,
	orchestrator.ArtifactJSON: wunderv1.ArtifactKind_ARTIFACT_KIND_DATA,
}

// artifactProto is ad, an artifact of userID's run.
func (a *API) artifactProto(userID string, ad orchestrator.ArtifactData) *wunderv1.Artifact {
	out := &wunderv1.Artifact{
		ArtifactId: ad.ArtifactID, Name: ad.Name, Kind: artifactKinds[ad.Kind], MediaType: ad.MediaType,
		Description: ad.Description, CallId: ad.CallID,
	}
	switch ad.Kind {
	case orchestrator.ArtifactFile:
		out.Path, out.Size, out.Sha256, out.Content = ad.Path, ad.Size, ad.SHA256, ad.Bytes
		q := url.Values{"path": {ad.Path}}
		if userID != "" {
			q.Set("user_id", userID)
		}
		out.Uri = strings.TrimRight(a.opts.PublicURL, "/") + "/wunder/workspace/download?" + q.Encode()
	default:
		if len(ad.Data) > 0 {
			var v structpb.Value
			if err := protojson.Unmarshal(ad.Data, &v); err == nil {
				out.Data = &v
			}
		}
	}
	return out
}

// eventArtifacts are the typed artifacts of an event of userID's run:
// the one an artifact event announces, every one a final event lists.
func (a *API) eventArtifacts(userID string, ev orchestrator.Event) []*wunderv1.Artifact {
	var list []orchestrator.ArtifactData
	switch ev.Type {
	case orchestrator.EventArtifact:
		var ad orchestrator.ArtifactData
		if json.Unmarshal(ev.Data, &ad) != nil || ad.ArtifactID == "" {
			return nil
		}
		list = []orchestrator.ArtifactData{ad}
	case orchestrator.EventFinal:
		var f orchestrator.FinalData
		if json.Unmarshal(ev.Data, &f) != nil {
			return nil
		}
		list = f.Artifacts
	}
	var out []*wunderv1.Artifact
	for _, ad := range list {
		out = append(out, a.artifactProto(userID, ad))
	}
	return out
}

// runWithArtifacts is runProto(r) with, once r ended, the artifacts its
// final event lists. r was looked up with the caller's scope, so its log
// is read as its owner's. A log that no longer holds the final event
// gives none.
func (a *API) runWithArtifacts(ctx context.Context, r *orchestrator.Run) (*wunderv1.Run, error) {
	out := runProto(r)
	if !r.State.Terminal() || r.LastSeq < 1 {
		return out, nil
	}
	for ev, err := range a.b.Events(ctx, r.UserID, r.ID, r.LastSeq-1) {
		if err != nil {
			return nil, err
		}
		if ev.Type == orchestrator.EventFinal {
			out.Artifacts = a.eventArtifacts(r.UserID, ev)
		}
		break
	}
	return out, nil
}
