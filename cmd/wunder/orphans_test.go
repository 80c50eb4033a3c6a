package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/evaluation"
	"github.com/wunder/wunder/internal/loadtest"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/storage"
)

// An evaluation and a load test that a crashed server left running end
// when a server starts: failed (stopped), saying the server that ran them
// stopped. One whose server still holds its lease (a replica) stays
// running.
func TestServerEndsOrphanedEvaluationsAndLoadTests(t *testing.T) {
	dir := dataDir(t)
	ctx := context.Background()
	st, err := storage.Open(ctx, storage.Options{SQLitePath: filepath.Join(dir, "wunder.db"), AutoMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	const crashed, replica = "elsewhere:4242:1:crashed000", "elsewhere:4343:1:replica000"
	if err := st.AcquireLock(ctx, "instance:"+replica, replica, time.Hour); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Minute).UTC()
	for _, r := range []*evaluation.Run{
		{ID: "ev_crashed", Status: evaluation.StatusRunning, ModelName: "fake", CaseCount: 1, StartedAt: started, Instance: crashed},
		{ID: "ev_replica", Status: evaluation.StatusRunning, ModelName: "fake", CaseCount: 1, StartedAt: started, Instance: replica},
	} {
		if err := (evalStore{st}).SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := (evalStore{st}).SaveItem(ctx, &evaluation.Item{RunID: "ev_crashed", CaseID: "c1", Status: evaluation.StatusActive, StartedAt: started}); err != nil {
		t.Fatal(err)
	}
	lt := &loadtest.Report{ID: "lt_crashed", Status: loadtest.StatusRunning, Request: loadtest.Request{Concurrency: []int{2}, RunsPerStep: 5},
		Steps: []loadtest.Step{}, StartedAt: started, Instance: crashed}
	if err := (throughputStore{st}).SaveThroughput(ctx, lt); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	modelSrv := httptest.NewServer(&fakellm.Server{Chunks: 2})
	t.Cleanup(modelSrv.Close)
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.Sandbox.Mode = config.SandboxNone
	cfg.Security.APIKey = "admin-key"
	m := config.NewModel()
	m.Provider, m.BaseURL, m.Model = config.ProviderLocal, modelSrv.URL+"/v1", "fake"
	cfg.LLM.Models = map[string]config.Model{"fake": m}
	s, _ := serveConfig(t, cfg)

	get := func(path string, v any) {
		t.Helper()
		res := s.rest(t, "GET", path, "", adminKey)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", path, res.StatusCode, b)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, b)
		}
	}
	var ev struct {
		Run   evaluation.Run    `json:"run"`
		Items []evaluation.Item `json:"items"`
	}
	get("/wunder/admin/evaluation/ev_crashed", &ev)
	if ev.Run.Status != evaluation.StatusFailed || ev.Run.Error == "" || ev.Run.FinishedAt == nil || ev.Run.Errors != 1 ||
		len(ev.Items) != 1 || ev.Items[0].Status != evaluation.StatusError {
		t.Errorf("the crashed server's evaluation = %+v, items %+v; want failed, its case an error", ev.Run, ev.Items)
	}
	get("/wunder/admin/evaluation/ev_replica", &ev)
	if ev.Run.Status != evaluation.StatusRunning {
		t.Errorf("the replica's evaluation = %s; want running (its server holds its lease)", ev.Run.Status)
	}
	var rep loadtest.Report
	get("/wunder/admin/throughput/report?run_id=lt_crashed", &rep)
	if rep.Status != loadtest.StatusStopped || rep.Error == "" || rep.FinishedAt == nil {
		t.Errorf("the crashed server's load test = %+v; want stopped, saying why", rep)
	}
}
