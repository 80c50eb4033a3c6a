package storage

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// runIDs decodes the {"id": ...} runs a listing returns.
func runIDs(t *testing.T, raws []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(raws))
	for i, r := range raws {
		var v struct{ ID string }
		if err := json.Unmarshal(r, &v); err != nil {
			t.Fatalf("run %d: %v (%s)", i, err, r)
		}
		out[i] = v.ID
	}
	return out
}

// ListEvaluationRuns on both backends gives the same answers: newest
// first (ties by id, descending), every filter combinable, Since and Until
// inclusive at the stored precision, Limit after the filters.
func TestListEvaluationRunsFilters(t *testing.T) {
	// Nanoseconds and a zone on purpose: the bounds must match the stored,
	// truncated and UTC, times.
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))
	runs := []EvaluationRun{
		{ID: "a", ModelName: "m1", Status: "finished", StartedAt: t0},
		{ID: "b", ModelName: "m2", Status: "finished", StartedAt: t0.Add(time.Minute)},
		{ID: "c", ModelName: "m1", Status: "running", StartedAt: t0.Add(2 * time.Minute)},
		{ID: "d", ModelName: "m1", Status: "finished", StartedAt: t0.Add(2 * time.Minute)}, // ties with c
		{ID: "e", ModelName: "m2", Status: "failed", StartedAt: t0.Add(3 * time.Minute)},
	}
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			for _, r := range runs {
				r.Run = json.RawMessage(`{"id":"` + r.ID + `"}`)
				must(t, s.SaveEvaluationRun(ctx, &r))
			}
			for _, tc := range []struct {
				name string
				f    EvaluationFilter
				want []string
			}{
				{"all, newest first, ties by id descending", EvaluationFilter{}, []string{"e", "d", "c", "b", "a"}},
				{"one model", EvaluationFilter{ModelName: "m1"}, []string{"d", "c", "a"}},
				{"one status", EvaluationFilter{Status: "finished"}, []string{"d", "b", "a"}},
				{"model and status", EvaluationFilter{ModelName: "m2", Status: "failed"}, []string{"e"}},
				{"since, inclusive", EvaluationFilter{Since: t0.Add(2 * time.Minute)}, []string{"e", "d", "c"}},
				{"until, inclusive", EvaluationFilter{Until: t0.Add(time.Minute)}, []string{"b", "a"}},
				{"a window of one instant", EvaluationFilter{Since: t0.Add(2 * time.Minute), Until: t0.Add(2 * time.Minute)}, []string{"d", "c"}},
				{"since in UTC", EvaluationFilter{Since: t0.Add(3 * time.Minute).UTC()}, []string{"e"}},
				{"limit", EvaluationFilter{Limit: 2}, []string{"e", "d"}},
				{"limit after the filters", EvaluationFilter{ModelName: "m1", Limit: 2}, []string{"d", "c"}},
				{"an empty window", EvaluationFilter{Since: t0.Add(time.Hour)}, []string{}},
				{"an unknown model", EvaluationFilter{ModelName: "m9"}, []string{}},
			} {
				got, err := s.ListEvaluationRuns(ctx, tc.f)
				must(t, err)
				if ids := runIDs(t, got); !slices.Equal(ids, tc.want) {
					t.Errorf("%s: %q; want %q", tc.name, ids, tc.want)
				}
			}
		})
	}
}

// Items come in seq order (ties by case id); a run's items are its own,
// and a run without any has an empty list, not an error. Deleting a run
// leaves other runs' items.
func TestEvaluationItemsOrderAndScope(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			for _, id := range []string{"r1", "r2"} {
				must(t, s.SaveEvaluationRun(ctx, &EvaluationRun{ID: id, ModelName: "m", Status: "running", Run: json.RawMessage(`{}`)}))
			}
			for _, it := range []struct {
				run, c string
				seq    int
			}{{"r1", "z", 0}, {"r1", "b", 1}, {"r1", "a", 1}, {"r1", "y", 2}, {"r2", "only", 0}} {
				must(t, s.SaveEvaluationItem(ctx, it.run, it.c, it.seq, "passed", 1, json.RawMessage(`{"id":"`+it.c+`"}`)))
			}
			items, err := s.EvaluationItems(ctx, "r1")
			must(t, err)
			if ids := runIDs(t, items); !slices.Equal(ids, []string{"z", "a", "b", "y"}) {
				t.Errorf("items of r1 = %q; want seq order, ties by case id", ids)
			}
			items, err = s.EvaluationItems(ctx, "none")
			if err != nil || len(items) != 0 {
				t.Errorf("items of an unknown run = %s, %v; want none and no error", items, err)
			}
			n, err := s.DeleteEvaluationRun(ctx, "r1")
			if err != nil || n != 5 {
				t.Errorf("DeleteEvaluationRun(r1) = %d, %v; want 5 rows (the run and its 4 items)", n, err)
			}
			items, err = s.EvaluationItems(ctx, "r2")
			must(t, err)
			if ids := runIDs(t, items); !slices.Equal(ids, []string{"only"}) {
				t.Errorf("items of r2 after deleting r1 = %q", ids)
			}
		})
	}
}

// ListThroughput: newest first, at most limit, and the status filter takes
// any of several; an unknown status matches nothing.
func TestListThroughputLimitAndStatuses(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			for i, st := range []string{"finished", "running", "stopping", "failed"} {
				id := string(rune('a' + i))
				must(t, s.SaveThroughput(ctx, id, st, t0.Add(time.Duration(i)*time.Minute), json.RawMessage(`{"id":"`+id+`"}`)))
			}
			for _, tc := range []struct {
				limit    int
				statuses []string
				want     []string
			}{
				{10, nil, []string{"d", "c", "b", "a"}},
				{2, nil, []string{"d", "c"}},
				{10, []string{"running", "stopping"}, []string{"c", "b"}},
				{1, []string{"running", "stopping"}, []string{"c"}},
				{10, []string{"paused"}, []string{}},
			} {
				got, err := s.ListThroughput(ctx, tc.limit, tc.statuses...)
				must(t, err)
				if ids := runIDs(t, got); !slices.Equal(ids, tc.want) {
					t.Errorf("ListThroughput(%d, %q) = %q; want %q", tc.limit, tc.statuses, ids, tc.want)
				}
			}
		})
	}
}
