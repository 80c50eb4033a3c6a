package storage

import (
	"context"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// On PostgreSQL, one store hears at once of another's appended events and
// cancel requests (two "processes" on one database); a store on another
// schema hears nothing. SQLite has no notifications.
func TestRunChangeNotifications(t *testing.T) {
	if w := open(t, freshSQLite(t)).Watcher(); w != nil {
		t.Errorf("SQLite store has a watcher %v; want none (followers poll)", w)
	}
	opts := freshPostgres(t)
	a, b := open(t, opts), open(t, opts)
	other := open(t, freshPostgres(t))
	ctx := t.Context()
	for _, s := range []*Store{b, other} {
		must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
		for _, id := range []string{"warm", "r1"} {
			must(t, s.CreateRun(ctx, &orchestrator.Run{ID: id, SessionID: "s", UserID: "u", State: orchestrator.RunRunning, Owner: "x"}))
		}
	}
	changes := make(chan orchestrator.RunChange, 64)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- a.Watcher().WatchRuns(wctx, func(c orchestrator.RunChange) { changes <- c })
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("WatchRuns: %v", err)
		}
	})
	// LISTEN is in place once a change of the warm-up run is heard.
	heard := false
	for seq := int64(1); !heard && seq <= 200; seq++ {
		must(t, b.AppendEvents(ctx, []orchestrator.Event{{RunID: "warm", SessionID: "s", Seq: seq, Type: "progress", Time: time.Now()}}))
		select {
		case c := <-changes:
			heard = c.RunID == "warm" && !c.Cancel
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !heard {
		t.Fatal("the watcher never heard the warm-up run's events")
	}
	drain := func() {
		for {
			select {
			case <-changes:
			default:
				return
			}
		}
	}
	drain()
	next := func(what string) orchestrator.RunChange {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no notification", what)
		}
		return orchestrator.RunChange{}
	}
	// Another schema's changes are not heard: they come before ours, so
	// they would be read first.
	must(t, other.AppendEvents(ctx, []orchestrator.Event{{RunID: "r1", SessionID: "s", Seq: 1, Type: "progress", Time: time.Now()}}))
	if _, err := other.RequestCancel(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	must(t, b.AppendEvents(ctx, []orchestrator.Event{{RunID: "r1", SessionID: "s", Seq: 1, Type: "progress", Time: time.Now()}}))
	if c := next("events"); c != (orchestrator.RunChange{RunID: "r1"}) {
		t.Fatalf("after AppendEvents: %+v; want events of r1 (and nothing of the other schema)", c)
	}
	if _, err := b.RequestCancel(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if c := next("cancel"); c != (orchestrator.RunChange{RunID: "r1", Cancel: true}) {
		t.Fatalf("after RequestCancel: %+v; want a cancel of r1", c)
	}
	// A cancel that changes nothing (already cancelling) is not announced.
	if _, err := b.RequestCancel(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	must(t, b.AppendEvents(ctx, []orchestrator.Event{{RunID: "r1", SessionID: "s", Seq: 2, Type: "progress", Time: time.Now()}}))
	if c := next("events after a no-op cancel"); c != (orchestrator.RunChange{RunID: "r1"}) {
		t.Fatalf("after a repeated cancel and an append: %+v; want only the append", c)
	}
}
