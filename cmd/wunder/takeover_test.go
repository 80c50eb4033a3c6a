package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// Takeover by default: two replicas (real processes) on one PostgreSQL
// and one data directory, on wunder's default concurrency settings
// (resume_interrupted: true). Replica A runs a tool round whose side
// effect is counted (a line appended to a file), stores it, and is killed
// with SIGKILL while the model answers the next round. Replica B, which
// was never restarted, finds the run of the dead process, takes it over
// and finishes it from the stored round: the tool is not executed a
// second time, and a follower that read part of the log from A and
// reconnects to B with the last seq it saw gets the rest, each seq once,
// densely, through one final event.
func TestFaultTakeoverByReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("process fault suite skipped in -short mode")
	}
	dsn := pgSchema(t)
	m := fakemodel.Directives()
	// Hold the first call that answers after the tool round: A's. The
	// call B makes after the takeover goes through.
	var heldOnce atomic.Bool
	m.Hold(func(req *orchestrator.ModelRequest) bool {
		_, results := fakemodel.Conversation(req)
		return len(results) > 0 && heldOnce.CompareAndSwap(false, true)
	})
	model := httptest.NewServer(&fakellm.Server{Model: m, Chunks: 2})
	t.Cleanup(model.Close)

	dir := dataDir(t)
	portA, portB := freePort(t), freePort(t)
	// The concurrency section says nothing: the defaults are under test.
	cfgA := writeFaultConfig(t, dir, portA, model.URL, dsn, "")
	if err := os.Rename(cfgA, filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	cfgB := writeFaultConfig(t, dir, portB, model.URL, dsn, "")
	a := startWunder(t, filepath.Join(dir, "a.yaml"), portA)
	b := startWunder(t, cfgB, portB)
	ca, cb := client.New(a.URL, "", nil), client.New(b.URL, "", nil)

	run, err := ca.Submit(t.Context(), client.RunRequest{UserID: "takeover", ToolNames: []string{"execute_command"},
		Question: "run: sh -c 'echo hit >> count.txt; echo counted'"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Held():
	case <-time.After(30 * time.Second):
		t.Fatalf("the model call after the tool round never came\n%s", a.Logs())
	}
	// The follower reads what A stored up to the held model call.
	var seen []client.Event
	for ev, err := range ca.Follow(t.Context(), "takeover", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, ev)
		if ev.Type == "tool_result" {
			break
		}
	}
	counter := filepath.Join(dir, "workspaces", "takeover", "count.txt")
	if got, _ := os.ReadFile(counter); string(got) != "hit\n" {
		t.Fatalf("count.txt before the kill = %q; want one hit", got)
	}
	// The round is recorded once its history is stored: the log stores a
	// round's messages with the batch after its tool_result, so the
	// follower can see the result a moment before. Kill A once the round
	// is on record, as the guarantee under test is stated.
	waitFor(t, 30*time.Second, "the tool round in the session's history", func() bool {
		resp, err := http.Get(a.URL + "/wunder/sessions/" + url.PathEscape(run.SessionID) + "?user_id=takeover")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(b), "counted")
	})
	a.Kill9(t)

	// B takes it over by itself (its reaper), with no restart of A.
	rest := collectFollowAfter(t, cb, "takeover", run.ID, seen[len(seen)-1].Seq)
	all := append(append([]client.Event(nil), seen...), rest...)
	for i, ev := range all {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: the log is not dense or has a duplicate: %v", i, ev.Seq, seqTypes(all))
		}
	}
	resumed := false
	for _, ev := range rest {
		resumed = resumed || ev.Type == "progress" && strings.Contains(string(ev.Data), `"resumed"`)
	}
	if !resumed {
		t.Fatalf("after the kill the follower got %v; want a progress event resumed", seqTypes(rest))
	}
	f := finalOf(t, all)
	if f.State != "finished" || !strings.Contains(f.Answer, "counted") {
		t.Fatalf("the run taken over ended %+v; want finished with the stored tool result", f)
	}
	if got, _ := os.ReadFile(counter); string(got) != "hit\n" {
		t.Fatalf("count.txt after the takeover = %q: the tool of the stored round ran again", got)
	}
	if got := getRun(t, b.URL, "takeover", run.ID); got["state"] != "finished" {
		t.Fatalf("the run reads %v on B", got["state"])
	}
}

func seqTypes(evs []client.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%d:%s", ev.Seq, ev.Type)
	}
	return out
}
