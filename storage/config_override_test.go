package storage

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// The configuration override row on both backends: revisions move by one,
// a stale revision changes nothing, and of two writers that read the same
// revision exactly one wins.
func TestConfigOverride(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.fresh(t))
			ctx := t.Context()
			if got, rev, err := st.ConfigOverride(ctx); err != nil || got != nil || rev != 0 {
				t.Fatalf("before any change: %s %d %v", got, rev, err)
			}
			if _, err := st.SaveConfigOverride(ctx, json.RawMessage(`{}`), 3); !errors.Is(err, orchestrator.ErrConflict) {
				t.Fatalf("a change based on revision 3 of nothing: %v, want ErrConflict", err)
			}
			rev, err := st.SaveConfigOverride(ctx, json.RawMessage(`{"llm":{"default":"a"}}`), 0)
			if err != nil || rev != 1 {
				t.Fatalf("first save: %d %v", rev, err)
			}
			if _, err := st.SaveConfigOverride(ctx, json.RawMessage(`{}`), 0); !errors.Is(err, orchestrator.ErrConflict) {
				t.Fatalf("a second first save: %v, want ErrConflict", err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			for _, body := range []string{`{"x":1}`, `{"x":2}`} {
				wg.Go(func() {
					if _, err := st.SaveConfigOverride(ctx, json.RawMessage(body), 1); err == nil {
						mu.Lock()
						wins++
						mu.Unlock()
					} else if !errors.Is(err, orchestrator.ErrConflict) {
						t.Errorf("save: %v", err)
					}
				})
			}
			wg.Wait()
			if wins != 1 {
				t.Fatalf("%d of two writers from revision 1 won, want exactly 1", wins)
			}
			got, rev, err := st.ConfigOverride(ctx)
			if err != nil || rev != 2 || (string(got) != `{"x":1}` && string(got) != `{"x":2}`) {
				t.Fatalf("after the race: %s %d %v", got, rev, err)
			}
			if r, err := st.ConfigRevision(ctx); err != nil || r != 2 {
				t.Fatalf("ConfigRevision = %d %v, want 2", r, err)
			}
		})
	}
}
