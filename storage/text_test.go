package storage

import (
	"errors"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// Arbitrary text through SQLite and PostgreSQL: every field is stored
// without an error and reads back as orchestrator.StoredText of what was
// written, the same as in the in-memory store. The seeds run in every
// go test; `go test -fuzz FuzzStoreTextSQLite ./storage` explores further.
func FuzzStoreTextSQLite(f *testing.F)   { fuzzStoreText(f, freshSQLite) }
func FuzzStoreTextPostgres(f *testing.F) { fuzzStoreText(f, freshPostgres) }

func fuzzStoreText(f *testing.F, fresh func(testing.TB) Options) {
	for _, s := range orchestratortest.TextSeeds() {
		f.Add(s)
	}
	s := open(f, fresh(f))
	f.Fuzz(func(t *testing.T, text string) { orchestratortest.CheckStoredText(t, s, text) })
}

// The cases of issue 9, by name: a NUL in a question, a NUL in a lookup.
func TestNULIsStoredAsReplacementCharacter(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s1", UserID: "nul1"}))
			must(t, s.CreateRun(ctx, &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "nul1",
				State: orchestrator.RunRunning, Question: "#say hi\x00there"}))
			r, err := s.GetRun(ctx, "r1")
			must(t, err)
			if want := "#say hi\ufffdthere"; r.Question != want {
				t.Errorf("stored question = %q; want %q", r.Question, want)
			}
			_, err = s.GetRun(ctx, "r\x00")
			if !errors.Is(err, orchestrator.ErrNotFound) {
				t.Errorf("GetRun(%q) = %v; want ErrNotFound", "r\x00", err)
			}
		})
	}
}
