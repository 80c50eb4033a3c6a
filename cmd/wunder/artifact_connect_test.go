package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/internal/config"
)

// Artifacts over Connect have a message of their own, on a real server
// whose model calls the artifact tool, read by a connect-go client (gRPC
// over h2c): the Run stream's artifact event and its final event carry
// them typed; GetRun and Cancel list them on the Run, ListRuns with
// include_artifacts (not without); a small file comes with its bytes, a
// large one by its URI, which downloads it; a data artifact is any JSON
// value; an admin following alice's run gets URIs naming alice.
func TestArtifactsOverConnect(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Server.PublicURL = "" })
	const csv = "a,b\n1,2\n"
	big := strings.Repeat("0123456789abcdef", 5000) // 80,000 bytes: over the 64 KiB carried inline
	mustStatus(t, s.rest(t, "POST", "/wunder/workspace/file", `{"user_id":"alice","path":"report.csv","content":"a,b\n1,2\n","create_if_missing":true}`, nil), 200)
	mustStatus(t, s.rest(t, "POST", "/wunder/workspace/file", `{"user_id":"alice","path":"big.txt","content":"`+big+`","create_if_missing":true}`, nil), 200)
	runs := wunderv1connect.NewRunServiceClient(&http.Client{Transport: headerRT{h2c: true}}, s.url, connect.WithGRPC())

	// run streams a run of alice and returns its events' artifacts: those
	// of the artifact events, and those of the final event.
	run := func(question string) (runID string, announced, final []*wunderv1.Artifact) {
		t.Helper()
		st, err := runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: "alice", Question: question, ToolNames: []string{"artifact"}}))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for st.Receive() {
			ev := st.Msg().GetEvent()
			runID = ev.GetRunId()
			switch ev.GetType() {
			case "artifact":
				announced = append(announced, ev.GetArtifacts()...)
			case "final":
				if ev.GetData().AsMap()["state"] != "finished" {
					t.Fatalf("%s: final %v", question, ev.GetData().AsMap())
				}
				final = ev.GetArtifacts()
			default:
				if len(ev.GetArtifacts()) > 0 {
					t.Errorf("a %s event with artifacts", ev.GetType())
				}
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		return runID, announced, final
	}
	one := func(what string, list []*wunderv1.Artifact) *wunderv1.Artifact {
		t.Helper()
		if len(list) != 1 {
			t.Fatalf("%s: %d artifacts, want 1: %v", what, len(list), list)
		}
		return list[0]
	}

	// A small file: its bytes, and a URI.
	smallRun, announced, final := run(`call artifact {"path":"report.csv","description":"the numbers"}`)
	small := one("artifact event", announced)
	if small.GetKind() != wunderv1.ArtifactKind_ARTIFACT_KIND_FILE || string(small.GetContent()) != csv || small.GetName() != "report.csv" ||
		small.GetPath() != "report.csv" || small.GetSize() != int64(len(csv)) || len(small.GetSha256()) != 64 ||
		!strings.HasPrefix(small.GetMediaType(), "text/csv") || small.GetDescription() != "the numbers" || small.GetCallId() == "" ||
		small.GetUri() != "/wunder/workspace/download?path=report.csv&user_id=alice" {
		t.Fatalf("small file artifact: %v", small)
	}
	if f := one("final event", final); f.GetArtifactId() != small.GetArtifactId() || string(f.GetContent()) != csv {
		t.Fatalf("final event's artifact %v, want %v", f, small)
	}
	got, err := runs.GetRun(t.Context(), connect.NewRequest(&wunderv1.GetRunRequest{UserId: "alice", RunId: smallRun}))
	if err != nil {
		t.Fatal(err)
	}
	if a := one("GetRun", got.Msg.GetRun().GetArtifacts()); a.GetArtifactId() != small.GetArtifactId() || string(a.GetContent()) != csv {
		t.Fatalf("GetRun's artifact %v", a)
	}

	// A large file: no bytes; its URI downloads it.
	_, announced, _ = run(`call artifact {"path":"big.txt"}`)
	large := one("large file", announced)
	if len(large.GetContent()) != 0 || large.GetSize() != int64(len(big)) {
		t.Fatalf("large file artifact: %d bytes inline, size %d", len(large.GetContent()), large.GetSize())
	}
	resp, err := http.Get(s.url + large.GetUri())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != big {
		t.Fatalf("GET %s: %d, %d bytes", large.GetUri(), resp.StatusCode, len(body))
	}

	// Data: any JSON value, here a list.
	dataRun, announced, _ := run(`call artifact {"data":[1,"two",{"three":3}],"name":"mixed"}`)
	data := one("data", announced)
	if data.GetKind() != wunderv1.ArtifactKind_ARTIFACT_KIND_DATA || data.GetName() != "mixed" || data.GetMediaType() != "application/json" || data.GetUri() != "" {
		t.Fatalf("data artifact: %v", data)
	}
	if l := data.GetData().GetListValue().AsSlice(); len(l) != 3 || l[1] != "two" || l[2].(map[string]any)["three"] != 3.0 {
		t.Fatalf("data artifact's value: %v", data.GetData())
	}

	// ListRuns: with include_artifacts each finished run has its own, without none.
	for _, include := range []bool{false, true} {
		list, err := runs.ListRuns(t.Context(), connect.NewRequest(&wunderv1.ListRunsRequest{UserId: "alice", IncludeArtifacts: include}))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range list.Msg.GetRuns() {
			n += len(r.GetArtifacts())
			if include && r.GetRunId() == dataRun && one("ListRuns", r.GetArtifacts()).GetArtifactId() != data.GetArtifactId() {
				t.Errorf("ListRuns: run %s lists another artifact", dataRun)
			}
		}
		if want := map[bool]int{false: 0, true: 3}[include]; n != want || len(list.Msg.GetRuns()) != 3 {
			t.Fatalf("ListRuns include_artifacts=%v: %d artifacts over %d runs; want %d over 3", include, n, len(list.Msg.GetRuns()), want)
		}
	}

	// An admin following alice's run (no user_id): the URI names alice.
	st, err := runs.Follow(t.Context(), connect.NewRequest(&wunderv1.FollowRequest{RunId: smallRun}))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var uris []string
	for st.Receive() {
		for _, a := range st.Msg().GetEvent().GetArtifacts() {
			uris = append(uris, a.GetUri())
		}
	}
	if len(uris) != 2 || uris[0] != small.GetUri() || uris[1] != small.GetUri() {
		t.Fatalf("admin Follow: URIs %v; want the artifact and final events naming alice", uris)
	}
}
