package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// Load-test reports (throughput_runs) and evaluation runs with their
// per-case items (evaluation_runs, evaluation_items). The reports are
// JSON shaped by their owners (internal/loadtest, internal/evaluation);
// cmd/wunder adapts these methods to their Store interfaces.

type throughputRow struct {
	bun.BaseModel `bun:"table:throughput_runs"`

	ID        string    `bun:"id,pk"`
	Status    string    `bun:"status,notnull"`
	StartedAt time.Time `bun:"started_at,notnull"`
	Report    string    `bun:"report,notnull"`
}

// SaveThroughput inserts or replaces a load-test report.
func (s *Store) SaveThroughput(ctx context.Context, id, status string, startedAt time.Time, report json.RawMessage) error {
	if id == "" {
		return invalid("a load-test report needs an id")
	}
	row := &throughputRow{ID: id, Status: status, StartedAt: stamp(startedAt), Report: string(report)}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(row).On("CONFLICT (id) DO UPDATE").
			Set("status = EXCLUDED.status, report = EXCLUDED.report").Exec(ctx)
		return dbErr(err, "save load test", "load test "+id)
	})
}

// GetThroughput returns a load-test report; ErrNotFound if none.
func (s *Store) GetThroughput(ctx context.Context, id string) (json.RawMessage, error) {
	row := new(throughputRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr(err, "get load test", "load test "+id)
	}
	return json.RawMessage(row.Report), nil
}

// ListThroughput returns the newest load-test reports first, at most
// limit of them; with statuses, only those in one of them.
func (s *Store) ListThroughput(ctx context.Context, limit int, statuses ...string) ([]json.RawMessage, error) {
	var rows []throughputRow
	q := s.db.NewSelect().Model(&rows).Order("started_at DESC", "id DESC").Limit(int64(limit))
	if len(statuses) > 0 {
		q = q.Where("status IN (?)", bun.List(statuses))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr(err, "list load tests", "")
	}
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = json.RawMessage(r.Report)
	}
	return out, nil
}

// EvaluationRun is an evaluation_runs row: the columns listings use, and
// the run as JSON.
type EvaluationRun struct {
	ID, ModelName, Status                  string
	Score                                  float64
	Cases, Passed, Failed, Skipped, Errors int
	StartedAt                              time.Time
	FinishedAt                             *time.Time
	Run                                    json.RawMessage
}

type evalRunRow struct {
	bun.BaseModel `bun:"table:evaluation_runs"`

	ID         string     `bun:"id,pk"`
	ModelName  string     `bun:"model_name,notnull"`
	Status     string     `bun:"status,notnull"`
	Score      float64    `bun:"score,notnull"`
	Cases      int        `bun:"case_count,notnull"`
	Passed     int        `bun:"passed_count,notnull"`
	Failed     int        `bun:"failed_count,notnull"`
	Skipped    int        `bun:"skipped_count,notnull"`
	Errors     int        `bun:"error_count,notnull"`
	StartedAt  time.Time  `bun:"started_at,notnull"`
	FinishedAt *time.Time `bun:"finished_at"`
	Run        string     `bun:"run,notnull"`
}

type evalItemRow struct {
	bun.BaseModel `bun:"table:evaluation_items"`

	RunID  string  `bun:"run_id,pk"`
	CaseID string  `bun:"case_id,pk"`
	Seq    int     `bun:"seq,notnull"`
	Status string  `bun:"status,notnull"`
	Score  float64 `bun:"score,notnull"`
	Item   string  `bun:"item,notnull"`
}

// SaveEvaluationRun inserts or replaces an evaluation run.
func (s *Store) SaveEvaluationRun(ctx context.Context, r *EvaluationRun) error {
	if r == nil || r.ID == "" {
		return invalid("an evaluation run needs an id")
	}
	row := &evalRunRow{ID: r.ID, ModelName: r.ModelName, Status: r.Status, Score: r.Score, Cases: r.Cases,
		Passed: r.Passed, Failed: r.Failed, Skipped: r.Skipped, Errors: r.Errors,
		StartedAt: stamp(r.StartedAt), FinishedAt: stampPtr(r.FinishedAt), Run: string(r.Run)}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(row).On("CONFLICT (id) DO UPDATE").
			Set("model_name = EXCLUDED.model_name, status = EXCLUDED.status, score = EXCLUDED.score, " +
				"case_count = EXCLUDED.case_count, passed_count = EXCLUDED.passed_count, failed_count = EXCLUDED.failed_count, " +
				"skipped_count = EXCLUDED.skipped_count, error_count = EXCLUDED.error_count, " +
				"finished_at = EXCLUDED.finished_at, run = EXCLUDED.run").Exec(ctx)
		return dbErr(err, "save evaluation run", "evaluation run "+r.ID)
	})
}

// GetEvaluationRun returns an evaluation run's JSON; ErrNotFound if none.
func (s *Store) GetEvaluationRun(ctx context.Context, id string) (json.RawMessage, error) {
	row := new(evalRunRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr(err, "get evaluation run", "evaluation run "+id)
	}
	return json.RawMessage(row.Run), nil
}

// EvaluationFilter selects evaluation runs ("" = any).
type EvaluationFilter struct {
	ModelName, Status string
	Since, Until      time.Time
	Limit             int
}

// ListEvaluationRuns returns evaluation runs, newest first.
func (s *Store) ListEvaluationRuns(ctx context.Context, f EvaluationFilter) ([]json.RawMessage, error) {
	var rows []evalRunRow
	q := s.db.NewSelect().Model(&rows).Order("started_at DESC", "id DESC")
	if f.ModelName != "" {
		q = q.Where("model_name = ?", f.ModelName)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if !f.Since.IsZero() {
		q = q.Where("started_at >= ?", stamp(f.Since))
	}
	if !f.Until.IsZero() {
		q = q.Where("started_at <= ?", stamp(f.Until))
	}
	if f.Limit > 0 {
		q = q.Limit(int64(f.Limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr(err, "list evaluation runs", "")
	}
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = json.RawMessage(r.Run)
	}
	return out, nil
}

// SaveEvaluationItem inserts or replaces a case's outcome in a run; seq
// orders the items of a run.
func (s *Store) SaveEvaluationItem(ctx context.Context, runID, caseID string, seq int, status string, score float64, item json.RawMessage) error {
	row := &evalItemRow{RunID: runID, CaseID: caseID, Seq: seq, Status: status, Score: score, Item: string(item)}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(row).On("CONFLICT (run_id, case_id) DO UPDATE").
			Set("seq = EXCLUDED.seq, status = EXCLUDED.status, score = EXCLUDED.score, item = EXCLUDED.item").Exec(ctx)
		return dbErr(err, "save evaluation item", "evaluation run "+runID)
	})
}

// EvaluationItems returns a run's items in seq order.
func (s *Store) EvaluationItems(ctx context.Context, runID string) ([]json.RawMessage, error) {
	var rows []evalItemRow
	if err := s.db.NewSelect().Model(&rows).Where("run_id = ?", runID).Order("seq", "case_id").Scan(ctx); err != nil {
		return nil, dbErr(err, "list evaluation items", "evaluation run "+runID)
	}
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = json.RawMessage(r.Item)
	}
	return out, nil
}

// DeleteEvaluationRun removes a run and its items, returning how many rows
// went; ErrNotFound if there was no such run.
func (s *Store) DeleteEvaluationRun(ctx context.Context, id string) (int, error) {
	var n int64
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewDelete().Model((*evalItemRow)(nil)).Where("run_id = ?", id).Exec(ctx)
		if err != nil {
			return dbErr(err, "delete evaluation items", "evaluation run "+id)
		}
		items, _ := res.RowsAffected()
		res, err = db.NewDelete().Model((*evalRunRow)(nil)).Where("id = ?", id).Exec(ctx)
		if err != nil {
			return dbErr(err, "delete evaluation run", "evaluation run "+id)
		}
		runs, _ := res.RowsAffected()
		if runs == 0 {
			return dbErr(sql.ErrNoRows, "delete evaluation run", "evaluation run "+id)
		}
		n = items + runs
		return nil
	})
	return int(n), err
}
