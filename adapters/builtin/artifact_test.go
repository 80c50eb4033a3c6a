package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// callArtifact calls the artifact tool and returns its result and what it
// emitted.
func callArtifact(t *testing.T, s *Set, args string) (*orchestrator.ToolResult, []orchestrator.ArtifactData) {
	t.Helper()
	var got []orchestrator.ArtifactData
	inv := &orchestrator.ToolInvocation{UserID: testUser, CallID: "c1", Arguments: json.RawMessage(args), Output: func(string, string) {},
		Emit: func(typ string, data any) {
			if typ != orchestrator.EventArtifact {
				t.Errorf("emitted %s", typ)
			}
			got = append(got, data.(orchestrator.ArtifactData))
		}}
	res, err := findTool(t, s, "artifact").Call(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	return res, got
}

// A small file travels with its bytes and digest, a large one (or one
// sent by link) by its path alone; a JSON value is a data artifact; bad arguments are error results
// that emit nothing.
func TestArtifactTool(t *testing.T) {
	s := newTestSet(t, Options{})
	big := strings.Repeat("x", inlineArtifactBytes+1)
	writeTree(t, workspaceDir(t, s), map[string]string{"out/report.csv": "a,b\n1,2\n", "big.txt": big})

	res, got := callArtifact(t, s, `{"path":"out/report.csv","description":"the numbers"}`)
	sum := sha256.Sum256([]byte("a,b\n1,2\n"))
	if res.IsError || len(got) != 1 || got[0].Kind != "file" || got[0].Path != "out/report.csv" || got[0].Name != "report.csv" ||
		!strings.HasPrefix(got[0].MediaType, "text/csv") || got[0].Size != 8 || string(got[0].Bytes) != "a,b\n1,2\n" ||
		got[0].SHA256 != hex.EncodeToString(sum[:]) || got[0].Description != "the numbers" || got[0].CallID != "c1" ||
		!strings.HasPrefix(got[0].ArtifactID, "art_") || !strings.Contains(res.Content, got[0].ArtifactID) {
		t.Fatalf("small file: %+v %+v", res, got)
	}
	if _, got = callArtifact(t, s, `{"path":"big.txt"}`); len(got) != 1 || got[0].Bytes != nil || got[0].Size != int64(len(big)) {
		t.Fatalf("large file: %+v", got)
	}
	if _, got = callArtifact(t, s, `{"path":"out/report.csv","link":true}`); len(got) != 1 || got[0].Bytes != nil || got[0].Size != 8 || got[0].SHA256 == "" {
		t.Fatalf("small file by link: %+v", got)
	}
	if _, got = callArtifact(t, s, `{"data":{"rows":2},"name":"summary"}`); len(got) != 1 || got[0].Kind != "data" ||
		string(got[0].Data) != `{"rows":2}` || got[0].MediaType != "application/json" || got[0].Name != "summary" {
		t.Fatalf("data: %+v", got)
	}
	for args, want := range map[string]string{
		`{}`:                                   "exactly one",
		`{"path":"big.txt","data":1}`:          "exactly one",
		`{"path":"nope.txt"}`:                  "nope.txt",
		`{"path":"../etc/passwd"}`:             "workspace",
		`{"path":"out"}`:                       "not a regular file",
		`{"data":1,"media_type":"not a type"}`: "media_type",
		`{"data":"` + strings.Repeat("y", 300<<10) + `"}`: "limit",
	} {
		res, got := callArtifact(t, s, args)
		if !res.IsError || !strings.Contains(res.Content, want) || len(got) != 0 {
			t.Errorf("%.50s: %+v, emitted %d; want an error naming %q", args, res, len(got), want)
		}
	}
}
