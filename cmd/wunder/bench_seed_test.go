package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// `wunder bench seed` writes the history it says into the configured
// store, pageable like any other; a second seed with another prefix adds
// to it; a seed that would collide is refused and leaves nothing half
// written of its chunk.
func TestBenchSeedCommand(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "wunder.yaml")
	if err := os.WriteFile(cfgPath, []byte("data_dir: "+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := func(args ...string) (int, string, string) {
		return runCLIIn(t, "", append([]string{"bench", "seed", "--config", cfgPath}, args...)...)
	}
	if code, out, errs := seed("--sessions", "1200", "--events", "6000", "--users", "12"); code != exitOK || !strings.Contains(out, "seeded 1200 sessions and 6000 events") {
		t.Fatalf("seed: %d %q %q", code, out, errs)
	}
	if code, out, errs := seed("--sessions", "10", "--events", "0", "--prefix", "more"); code != exitOK || !strings.Contains(out, "seeded 10 sessions and 30 events") {
		t.Fatalf("second seed: %d %q %q", code, out, errs)
	}
	if code, _, errs := seed("--sessions", "10"); code == exitOK || !strings.Contains(errs, "already exists") {
		t.Fatalf("colliding seed: %d %q", code, errs)
	}
	if code, _, _ := seed("--sessions", "0"); code != exitUsage {
		t.Fatalf("--sessions 0: exit %d, want %d", code, exitUsage)
	}

	st, err := storage.Open(t.Context(), storage.Options{SQLitePath: filepath.Join(dir, "wunder.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions, err := st.ListSessions(t.Context(), "seed_user_000003", orchestrator.Page{Limit: 1000})
	if err != nil || len(sessions) != 100 {
		t.Fatalf("sessions of one of 12 users = %d, %v; want 100", len(sessions), err)
	}
	runs, err := st.ListRuns(t.Context(), orchestrator.RunFilter{SessionID: sessions[0].ID, Page: orchestrator.Page{Limit: 10}})
	if err != nil || len(runs) != 1 || runs[0].State != orchestrator.RunFinished || runs[0].LastSeq != 5 {
		t.Fatalf("runs of a seeded session = %+v, %v; want one finished run with 5 events", runs, err)
	}
	evs, err := st.ListEvents(t.Context(), runs[0].ID, 0, 100)
	if err != nil || len(evs) != 5 || evs[0].Type != orchestrator.EventProgress || evs[4].Type != orchestrator.EventFinal {
		t.Fatalf("events of a seeded run = %+v, %v", evs, err)
	}
	more, err := st.ListSessions(t.Context(), "more_user_000000", orchestrator.Page{Limit: 100})
	if err != nil || len(more) != 10 {
		t.Fatalf("the second seed's sessions = %d, %v; want 10", len(more), err)
	}
}
