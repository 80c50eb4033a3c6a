package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/eval"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/evaluation"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// newEvaluation wires capability evaluation: cases from evaluation.cases_dir
// (the embedded starter set when the default directory is absent), runs
// through the core, workspaces of the built-in tools, reports in the store.
func newEvaluation(c *config.Config, log *slog.Logger, models *liveModels, store *storage.Store, orch *orchestrator.Orchestrator, tools *builtin.Set) *evaluation.Manager {
	cfg := c.Evaluation
	return evaluation.NewManager(orch, evalWorkspace{tools}, evalStore{store}, evaluation.Options{
		Cases:        func() ([]evaluation.CaseSet, error) { return evaluation.Load(caseFS(cfg.CasesDir)) },
		DefaultModel: models.Default,
		HasModel:     func(name string) bool { return slices.Contains(models.Names(), name) },
		Judge:        evaluation.ModelJudge(models),
		JudgeModel:   cfg.JudgeModel,
		CaseTimeout:  time.Duration(cfg.CaseTimeoutSeconds) * time.Second,
		Logger:       log.With("component", "evaluation"),
		Instances:    orch, // a crashed server's evaluation is ended by another (orphans.go)
	})
}

// caseFS is the case directory, or the embedded starter set when dir is
// the default and does not exist (a binary run outside the repository).
func caseFS(dir string) fs.FS {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return os.DirFS(dir)
	}
	if dir == config.Default().Evaluation.CasesDir {
		sub, _ := fs.Sub(eval.Cases, "cases")
		return sub
	}
	return os.DirFS(dir) // absent: Load says so, with the path
}

// evalWorkspace adapts the built-in tools' workspaces.
type evalWorkspace struct{ tools *builtin.Set }

func (w evalWorkspace) WriteFile(userID, path string, data []byte) error {
	_, err := w.tools.WriteFile(context.Background(), userID, path, bytes.NewReader(data), true)
	return err
}

func (w evalWorkspace) ReadFile(userID, path string) ([]byte, error) {
	fc, err := w.tools.ReadFile(context.Background(), userID, path, 0)
	switch {
	case err != nil:
		return nil, err
	case fc.Binary || fc.TooLarge:
		return nil, fmt.Errorf("%s is binary or over the read limit", path)
	}
	return fc.Data, nil
}

func (w evalWorkspace) Remove(userID string) error {
	return deleteWorkspace(w.tools)(context.Background(), userID)
}

// evalStore keeps runs and items as JSON in the store's evaluation tables.
type evalStore struct{ st *storage.Store }

func (s evalStore) SaveRun(ctx context.Context, r *evaluation.Run) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.st.SaveEvaluationRun(ctx, &storage.EvaluationRun{ID: r.ID, ModelName: r.ModelName, Status: r.Status,
		Score: r.Score, Cases: r.CaseCount, Passed: r.Passed, Failed: r.Failed, Skipped: r.Skipped, Errors: r.Errors,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Run: b})
}

func (s evalStore) SaveItem(ctx context.Context, it *evaluation.Item) error {
	b, err := json.Marshal(it)
	if err != nil {
		return err
	}
	return s.st.SaveEvaluationItem(ctx, it.RunID, it.CaseID, it.Seq, it.Status, it.Score, b)
}

func (s evalStore) GetRun(ctx context.Context, id string) (*evaluation.Run, error) {
	b, err := s.st.GetEvaluationRun(ctx, id)
	if err != nil {
		return nil, err
	}
	return decodeOne[evaluation.Run](b)
}

func (s evalStore) Items(ctx context.Context, runID string) ([]*evaluation.Item, error) {
	raw, err := s.st.EvaluationItems(ctx, runID)
	if err != nil {
		return nil, err
	}
	return decodeAll[evaluation.Item](raw)
}

func (s evalStore) ListRuns(ctx context.Context, f evaluation.Filter) ([]*evaluation.Run, error) {
	raw, err := s.st.ListEvaluationRuns(ctx, storage.EvaluationFilter{ModelName: f.ModelName, Status: f.Status, Since: f.Since, Until: f.Until, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	return decodeAll[evaluation.Run](raw)
}

func (s evalStore) DeleteRun(ctx context.Context, id string) (int, error) {
	return s.st.DeleteEvaluationRun(ctx, id)
}

func decodeOne[T any](b json.RawMessage) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("stored report: %w", err)
	}
	return v, nil
}

func decodeAll[T any](raw []json.RawMessage) ([]*T, error) {
	out := make([]*T, 0, len(raw))
	for _, b := range raw {
		v, err := decodeOne[T](b)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// evaluationAPI adapts the manager to the gateway's routes.
type evaluationAPI struct{ m *evaluation.Manager }

var _ gateway.Evaluation = evaluationAPI{}

func (e evaluationAPI) StartEvaluation(ctx context.Context, req gateway.EvaluationRequest) (any, error) {
	return e.m.Start(ctx, evaluation.Request{ModelName: req.ModelName, CaseSet: req.CaseSet, CaseIDs: req.CaseIDs})
}

func (e evaluationAPI) CancelEvaluation(ctx context.Context, id string) (any, error) {
	return e.m.Cancel(ctx, id)
}

func (e evaluationAPI) EvaluationRuns(ctx context.Context, f gateway.EvaluationFilter) (any, error) {
	return e.m.List(ctx, evaluation.Filter{ModelName: f.ModelName, Status: f.Status, Since: f.Since, Until: f.Until, Limit: f.Limit})
}

func (e evaluationAPI) EvaluationCases(context.Context) (any, error) {
	sets, err := e.m.Cases()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", orchestrator.ErrUnavailable, err)
	}
	return sets, nil
}

func (e evaluationAPI) EvaluationRun(ctx context.Context, id string) (any, error) {
	run, items, err := e.m.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"run": run, "items": items}, nil
}

func (e evaluationAPI) DeleteEvaluation(ctx context.Context, id string) (any, error) {
	n, err := e.m.Delete(ctx, id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "run_id": id, "deleted": n}, nil
}

func (e evaluationAPI) WatchEvaluation(ctx context.Context, id string) iter.Seq2[gateway.EvaluationEvent, error] {
	return func(yield func(gateway.EvaluationEvent, error) bool) {
		for ev, err := range e.m.Watch(ctx, id) {
			if !yield(gateway.EvaluationEvent{Type: ev.Type, Data: ev.Data}, err) {
				return
			}
		}
	}
}
