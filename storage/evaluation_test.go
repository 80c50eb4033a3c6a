package storage

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Load-test reports and evaluation runs on both backends: saved, replaced,
// listed newest first, filtered, deleted with their items.
func TestThroughputAndEvaluationTables(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.fresh(t))
			ctx := t.Context()
			t0 := time.Now().Add(-time.Hour)
			if _, err := st.GetThroughput(ctx, "tp_x"); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Fatalf("get before save: %v", err)
			}
			for i, id := range []string{"tp_a", "tp_b"} {
				if err := st.SaveThroughput(ctx, id, "running", t0.Add(time.Duration(i)*time.Minute), json.RawMessage(`{"run_id":"`+id+`"}`)); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.SaveThroughput(ctx, "tp_a", "finished", t0, json.RawMessage(`{"run_id":"tp_a","status":"finished"}`)); err != nil {
				t.Fatal(err)
			}
			got, err := st.GetThroughput(ctx, "tp_a")
			if err != nil || string(got) != `{"run_id":"tp_a","status":"finished"}` {
				t.Fatalf("get: %s %v", got, err)
			}
			list, err := st.ListThroughput(ctx, 10)
			if err != nil || len(list) != 2 || string(list[0]) != `{"run_id":"tp_b"}` {
				t.Fatalf("list: %s %v", list, err)
			}
			list, err = st.ListThroughput(ctx, 10, "running", "stopping")
			if err != nil || len(list) != 1 || string(list[0]) != `{"run_id":"tp_b"}` {
				t.Fatalf("list of the unfinished: %s %v; want tp_b alone", list, err)
			}

			for i, model := range []string{"m1", "m2"} {
				r := &EvaluationRun{ID: "ev_" + model, ModelName: model, Status: "running", StartedAt: t0.Add(time.Duration(i) * time.Minute), Run: json.RawMessage(`{"m":"` + model + `"}`)}
				if err := st.SaveEvaluationRun(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Now()
			if err := st.SaveEvaluationRun(ctx, &EvaluationRun{ID: "ev_m1", ModelName: "m1", Status: "finished", Score: 50, Cases: 2, Passed: 1, Failed: 1, StartedAt: t0, FinishedAt: &now, Run: json.RawMessage(`{"done":true}`)}); err != nil {
				t.Fatal(err)
			}
			for i, c := range []string{"b", "a"} {
				if err := st.SaveEvaluationItem(ctx, "ev_m1", c, i, "passed", 1, json.RawMessage(`{"case":"`+c+`"}`)); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.SaveEvaluationItem(ctx, "ev_m1", "b", 0, "failed", 0, json.RawMessage(`{"case":"b","again":1}`)); err != nil {
				t.Fatal(err)
			}
			items, err := st.EvaluationItems(ctx, "ev_m1")
			if err != nil || len(items) != 2 || string(items[0]) != `{"case":"b","again":1}` {
				t.Fatalf("items: %s %v", items, err)
			}
			runs, err := st.ListEvaluationRuns(ctx, EvaluationFilter{ModelName: "m1"})
			if err != nil || len(runs) != 1 || string(runs[0]) != `{"done":true}` {
				t.Fatalf("runs of m1: %s %v", runs, err)
			}
			runs, err = st.ListEvaluationRuns(ctx, EvaluationFilter{Status: "running"})
			if err != nil || len(runs) != 1 || string(runs[0]) != `{"m":"m2"}` {
				t.Fatalf("running: %s %v", runs, err)
			}
			n, err := st.DeleteEvaluationRun(ctx, "ev_m1")
			if err != nil || n != 3 {
				t.Fatalf("delete: %d %v, want 3 rows", n, err)
			}
			if _, err := st.GetEvaluationRun(ctx, "ev_m1"); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Errorf("get after delete: %v", err)
			}
			if _, err := st.DeleteEvaluationRun(ctx, "ev_m1"); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Errorf("second delete: %v", err)
			}
		})
	}
}
