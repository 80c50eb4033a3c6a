package a2a_test

import (
	"context"
	"errors"
	"iter"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wunder/wunder/a2a"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// refusing is a Backend whose every call fails with err: the error table
// alone is under test here (the real core's busy path is in the
// orchestrator's admission tests).
type refusing struct{ err error }

func (b refusing) Start(context.Context, orchestrator.RunRequest) (*orchestrator.Run, error) {
	return nil, b.err
}

func (b refusing) Events(context.Context, string, string, int64) iter.Seq2[orchestrator.Event, error] {
	return func(yield func(orchestrator.Event, error) bool) { yield(orchestrator.Event{}, b.err) }
}

func (b refusing) Cancel(context.Context, string, string) (*orchestrator.Run, error) {
	return nil, b.err
}
func (b refusing) GetRun(context.Context, string, string) (*orchestrator.Run, error) {
	return nil, b.err
}
func (b refusing) ListRuns(context.Context, orchestrator.RunFilter) ([]*orchestrator.Run, error) {
	return nil, b.err
}

func (b refusing) Approvals(context.Context, string, string) ([]*orchestrator.Approval, error) {
	return nil, b.err
}

func (b refusing) Wait(context.Context, string, string, int64, func(orchestrator.Event) error) (orchestrator.Waited, error) {
	return orchestrator.Waited{}, b.err
}

func (b refusing) Decide(context.Context, string, string, string, orchestrator.ApprovalDecision) (*orchestrator.Approval, error) {
	return nil, b.err
}

// Busy and unavailable leave as -32000 with an ErrorInfo reason and a
// RetryInfo, in both versions, and wunder's own A2A client reads them back
// as the same sentinels with the delay; a crash stays -32603.
func TestRetryableErrorsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		want   error
		reason string
		after  time.Duration
	}{
		{"busy", orchestrator.WithRetryAfter(orchestrator.ErrBusy, 3*time.Second), -32000, orchestrator.ErrBusy, w.ReasonBusy, 3 * time.Second},
		{"unavailable", orchestrator.ErrUnavailable, -32000, orchestrator.ErrUnavailable, w.ReasonUnavailable, time.Second},
		{"crash", errors.New("boom"), -32603, orchestrator.ErrUnavailable, "", 0},
	} {
		for _, v := range []w.Version{w.V10, w.V03} {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				srv := httptest.NewServer(a2a.New(refusing{tc.err}, nil))
				t.Cleanup(srv.Close)
				c := &w.Client{URL: srv.URL, Version: v}
				_, err := c.GetTask(t.Context(), "run_x")
				var rpc *w.Error
				if !errors.As(err, &rpc) || rpc.Code != tc.code {
					t.Fatalf("GetTask error = %v; want JSON-RPC code %d", err, tc.code)
				}
				if !errors.Is(err, tc.want) {
					t.Errorf("error %v does not read back as %v", err, tc.want)
				}
				after, ok := orchestrator.RetryAfter(err)
				if tc.after > 0 && (!ok || after != tc.after) {
					t.Errorf("retry delay = %v, %v; want %v", after, ok, tc.after)
				}
				if tc.reason != "" && !errors.Is(err, orchestrator.ErrBusy) == (tc.reason == w.ReasonBusy) {
					t.Errorf("reason %s read back wrongly: %v", tc.reason, err)
				}
			})
		}
	}
}
