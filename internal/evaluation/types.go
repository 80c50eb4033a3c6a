package evaluation

// What an evaluation is made of: its runs, items, events, and the stores and
// backends it runs on.

import (
	"context"
	"iter"
	"log/slog"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Backend is what an evaluation needs of the core;
// *orchestrator.Orchestrator satisfies it.
type Backend interface {
	Start(ctx context.Context, req orchestrator.RunRequest) (*orchestrator.Run, error)
	Events(ctx context.Context, userID, runID string, afterSeq int64) iter.Seq2[orchestrator.Event, error]
	Cancel(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	Tools(ctx context.Context, userID string) ([]orchestrator.ToolSpec, error)
}

// Workspace places and reads the files of a case's user, and removes the
// workspace after the case.
type Workspace interface {
	WriteFile(userID, path string, data []byte) error
	ReadFile(userID, path string) ([]byte, error)
	Remove(userID string) error
}

// Store keeps runs and their items.
type Store interface {
	SaveRun(ctx context.Context, r *Run) error
	SaveItem(ctx context.Context, it *Item) error
	// GetRun returns orchestrator.ErrNotFound for an unknown id.
	GetRun(ctx context.Context, id string) (*Run, error)
	Items(ctx context.Context, runID string) ([]*Item, error)
	ListRuns(ctx context.Context, f Filter) ([]*Run, error)
	// DeleteRun returns the rows removed; ErrNotFound for an unknown id.
	DeleteRun(ctx context.Context, id string) (int, error)
}

// Filter selects runs ("" or zero = any).
type Filter struct {
	ModelName, Status string
	Since, Until      time.Time
	Limit             int
}

// Run is an evaluation run: the model, the cases and the score.
type Run struct {
	ID         string     `json:"run_id"`
	Status     string     `json:"status"`
	ModelName  string     `json:"model_name"`
	CaseSet    string     `json:"case_set,omitempty"`
	CaseIDs    []string   `json:"case_ids"`
	Score      float64    `json:"total_score"`
	CaseCount  int        `json:"case_count"`
	Passed     int        `json:"passed_count"`
	Failed     int        `json:"failed_count"`
	Skipped    int        `json:"skipped_count"`
	Errors     int        `json:"error_count"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	ElapsedS   float64    `json:"elapsed_s"`
	Error      string     `json:"error,omitempty"`
	// Instance is the server instance that runs it (Options.Instances):
	// when that instance is gone, another one ends the run (Recover).
	Instance string `json:"instance,omitempty"`
}

// Item is one case's outcome in a run.
type Item struct {
	RunID      string        `json:"run_id"`
	CaseID     string        `json:"case_id"`
	CaseSet    string        `json:"case_set"`
	Seq        int           `json:"seq"`
	Status     string        `json:"status"`
	Score      float64       `json:"score"`
	MaxScore   float64       `json:"max_score"`
	Prompt     string        `json:"prompt"`
	Answer     string        `json:"final_answer,omitempty"`
	ToolCalls  []string      `json:"tool_calls,omitempty"`
	Checks     []CheckResult `json:"checker_detail,omitempty"`
	SkipReason string        `json:"skip_reason,omitempty"`
	Error      string        `json:"error,omitempty"`
	UserID     string        `json:"user_id"`
	SessionID  string        `json:"session_id,omitempty"`
	CoreRunID  string        `json:"wunder_run_id,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	ElapsedS   float64       `json:"elapsed_s"`
}

// Event is one event of a run's stream: eval_started ({run}),
// eval_item (an Item, first active, then with its outcome),
// eval_progress ({completed, total, passed, failed, skipped, errors}),
// eval_log ({message}), eval_finished ({run}).
type Event struct {
	Type string
	Data any
}

// Request starts a run.
type Request struct {
	ModelName string
	// CaseSet limits the run to one set; CaseIDs to these cases ("" and
	// nil = all).
	CaseSet string
	CaseIDs []string
}

// Options configure a Manager. Cases is required.
type Options struct {
	// Cases loads the case sets; it is called at every start, so edited
	// case files apply to the next run.
	Cases func() ([]CaseSet, error)
	// Models returns the default model's name and whether a name is a
	// configured model.
	DefaultModel func() string
	HasModel     func(name string) bool
	// Judge grades judge checks with JudgeModel ("" = the run's model);
	// nil: judge checks fail saying so.
	Judge      Judge
	JudgeModel string
	// CaseTimeout bounds one case's run. Default 5 minutes.
	CaseTimeout time.Duration
	Logger      *slog.Logger
	// Instances records which server instance runs an evaluation, so that
	// Recover can end one whose instance is gone; nil records none.
	Instances orchestrator.Instances
}
