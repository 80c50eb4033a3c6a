package storage

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

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

// bunTime formats by hand what bun's dialects write: the same text as
// time.Format with bun's layout, for times with and without a fraction,
// in other zones, and outside the years it formats itself.
func TestBunTimeIsBunsFormat(t *testing.T) {
	zone := time.FixedZone("x", -(7*3600 + 30*60))
	times := []time.Time{
		time.Date(2026, 11, 27, 6, 40, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100_000, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, zone),
		time.Date(1999, 7, 8, 9, 10, 11, 1_000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(12345, 1, 1, 0, 0, 0, 123_456_000, time.UTC),
		{},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		times = append(times, time.Unix(r.Int64N(1<<35), r.Int64N(1e9)))
	}
	for _, tm := range times {
		if got, want := bunTime(tm), tm.UTC().Format(bunLayout); got != want {
			t.Fatalf("bunTime(%v) = %q; want %q", tm, got, want)
		}
	}
}
