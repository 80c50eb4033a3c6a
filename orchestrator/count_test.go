package orchestrator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// plainStore hides the memstore's optional CountRuns.
type plainStore struct{ orchestrator.Store }

func TestCountRuns(t *testing.T) {
	mem := orchestratortest.NewMemStore()
	ctx := t.Context()
	if err := mem.CreateSession(ctx, &orchestrator.Session{ID: "s1", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2"} {
		if err := mem.CreateRun(ctx, &orchestrator.Run{ID: id, SessionID: "s1", UserID: "u1", State: orchestrator.RunFinished}); err != nil {
			t.Fatal(err)
		}
	}
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(), Settings: orchestrator.ModelSettings{Name: "m"}}
	for _, c := range []struct {
		name  string
		store orchestrator.Store
		want  int
		err   error
	}{
		{"counting store", mem, 2, nil},
		{"store without RunCounter", plainStore{mem}, 0, orchestrator.ErrUnavailable},
	} {
		o := orchestrator.New(c.store, models, orchestrator.NewRegistry("", nil), nil)
		n, err := o.CountRuns(ctx, orchestrator.RunFilter{UserID: "u1", Page: orchestrator.Page{Limit: 1}})
		if n != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s: CountRuns = %d, %v; want %d, %v", c.name, n, err, c.want, c.err)
		}
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = o.Close(cctx)
		cancel()
	}
}
