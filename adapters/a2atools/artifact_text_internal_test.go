package a2atools

import (
	"testing"

	w "github.com/wunder/wunder/internal/a2awire"
)

// A chunked artifact reads the same whether its chunks came as appends
// or all at once in a task's snapshot (a resubscription's first event),
// and a data part stands on a line of its own.
func TestArtifactTextSameEitherWay(t *testing.T) {
	streamed := &outcome{}
	streamed.putArtifact(w.Artifact{ArtifactID: "a", Parts: []w.Part{w.TextPart("part one")}}, false)
	streamed.putArtifact(w.Artifact{ArtifactID: "a", Parts: []w.Part{w.TextPart(" and two")}}, true)
	snapshot := &outcome{}
	snapshot.putArtifact(w.Artifact{ArtifactID: "a", Parts: []w.Part{w.TextPart("part one"), w.TextPart(" and two")}}, false)
	if got, want := snapshot.Artifacts[0].Text, streamed.Artifacts[0].Text; got != want || got != "part one and two" {
		t.Fatalf("snapshot %q, streamed %q; want both %q", got, want, "part one and two")
	}
	mixed := artifactText(w.Artifact{Parts: []w.Part{w.TextPart("rows:"), {Kind: "data", Data: []byte(`{"n":1}`)}, w.TextPart("end")}})
	if mixed != "rows:\n{\"n\":1}\nend" {
		t.Fatalf("mixed parts = %q", mixed)
	}
}
