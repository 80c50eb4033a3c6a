package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/loadtest"
	"github.com/wunder/wunder/internal/sse"
)

// The admin load test against the server itself with the fake model: one
// at a time (409), stop ends it, and a [1,2] ladder gives a stored report
// with a step per level, followed live over SSE.
func TestThroughputLadder(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key" })
	f := &fixture{s: s}

	// A long test (duration mode) is surely running when the second
	// start comes; stop ends it.
	var long loadtest.Report
	decodeInto(t, f.rest(t, "POST", "/wunder/admin/throughput/start", `{"concurrency_list":[1],"duration_s":60}`, adminKey), 202, &long)
	mustStatus(t, f.rest(t, "POST", "/wunder/admin/throughput/start", `{"concurrency_list":[1],"runs_per_step":1}`, adminKey), 409)
	var stopped loadtest.Report
	decodeInto(t, f.rest(t, "POST", "/wunder/admin/throughput/stop", ``, adminKey), 200, &stopped)
	if stopped.ID != long.ID || stopped.Status != loadtest.StatusStopped || len(stopped.Steps) != 1 || stopped.Steps[0].Errors != 0 {
		t.Fatalf("stopped: %+v", stopped)
	}
	mustStatus(t, f.rest(t, "POST", "/wunder/admin/throughput/stop", ``, adminKey), 404)

	var rep loadtest.Report
	decodeInto(t, f.rest(t, "POST", "/wunder/admin/throughput/start", `{"concurrency":[1,2],"runs_per_step":3,"question":"hello","stream":true}`, adminKey), 202, &rep)
	// Follow it: progress events, the final report last.
	r := f.rest(t, "GET", "/wunder/admin/throughput/status?stream=1", "", adminKey)
	mustStatus(t, r, 200)
	var last sse.Event
	for ev, err := range sse.Read(r.Body) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	}
	r.Body.Close()
	var final loadtest.Report
	switch last.Type {
	case "throughput_finished":
		if err := json.Unmarshal(last.Data, &final); err != nil {
			t.Fatal(err)
		}
	case "throughput_idle": // it ended before the stream began: read it
		decodeInto(t, f.rest(t, "GET", "/wunder/admin/throughput/report?run_id="+rep.ID, "", adminKey), 200, &final)
	default:
		t.Fatalf("stream ended with %q", last.Type)
	}
	checkLadder(t, final, rep.ID)

	// Stored: readable by id, and in the history.
	var stored loadtest.Report
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/throughput/report?run_id="+rep.ID, "", adminKey), 200, &stored)
	checkLadder(t, stored, rep.ID)
	var status loadtest.Status
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/throughput/status", "", adminKey), 200, &status)
	if status.Active != nil || len(status.History) != 2 || status.History[0].ID != rep.ID {
		t.Errorf("status: %+v", status)
	}
	// Its runs were made as the load test's users, visible in the monitor.
	var mon struct {
		Runs []struct {
			UserID string `json:"user_id"`
		} `json:"runs"`
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/monitor?limit=500", "", adminKey), 200, &mon)
	if len(mon.Runs) < 9 {
		t.Fatalf("monitor: %d runs, want at least 9", len(mon.Runs))
	}
	for _, run := range mon.Runs {
		if !strings.HasPrefix(run.UserID, loadtest.UserPrefix) {
			t.Errorf("a load-test run as %q", run.UserID)
		}
	}

	for _, body := range []string{`{}`, `{"concurrency_list":[0],"runs_per_step":1}`, `{"concurrency_list":[65],"runs_per_step":1}`,
		`{"concurrency_list":[1]}`, `{"concurrency_list":[1],"runs_per_step":1,"duration_s":1}`, `{"concurrency_list":[1],"concurrency":[1],"runs_per_step":1}`,
		`{"concurrency_list":[1],"duration_s":601}`, `{"nope":1}`} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/throughput/start", body, adminKey), 400)
	}
	mustStatus(t, f.rest(t, "GET", "/wunder/admin/throughput/report?run_id=tp_missing", "", adminKey), 404)
	mustStatus(t, f.rest(t, "GET", "/wunder/admin/throughput/status?stream=maybe", "", adminKey), 400)
}

func checkLadder(t *testing.T, r loadtest.Report, id string) {
	t.Helper()
	if r.ID != id || r.Status != loadtest.StatusFinished || len(r.Steps) != 2 || r.FinishedAt == nil {
		t.Fatalf("report: %+v", r)
	}
	for i, st := range r.Steps {
		level := i + 1
		if st.Concurrency != level || st.Runs != 3*level || st.Errors != 0 || st.RunsPerSec <= 0 ||
			st.P50MS <= 0 || st.P50MS > st.P95MS || st.P95MS > st.P99MS || st.FirstP50MS <= 0 || st.FirstP50MS > st.P99MS {
			t.Errorf("step %d: %+v", i, st)
		}
	}
}
