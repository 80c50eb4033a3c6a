package storage

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"sync/atomic"
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

// watch runs s's watcher until the test ends and returns its changes,
// once it hears a change of run warm (appended to by b, a store on the
// same database, whose session s holds run warm).
func watch(t *testing.T, s, b *Store) <-chan orchestrator.RunChange {
	t.Helper()
	changes := make(chan orchestrator.RunChange, 256)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.Watcher().WatchRuns(ctx, func(c orchestrator.RunChange) { changes <- c })
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("WatchRuns: %v", err)
		}
	})
	hearWarm(t, b, changes)
	return changes
}

// warmSeq numbers the warm-up events of every test.
var warmSeq atomic.Int64

// hearWarm appends to run warm until changes has a change of it (LISTEN
// is then in place), and drains what came with it.
func hearWarm(t *testing.T, b *Store, changes <-chan orchestrator.RunChange) {
	t.Helper()
	for range 200 {
		must(t, b.AppendEvents(t.Context(), []orchestrator.Event{{RunID: "warm", SessionID: "s", Seq: warmSeq.Add(1), Type: "progress", Time: time.Now()}}))
		select {
		case c := <-changes:
			if c.RunID == "warm" {
				for {
					select {
					case <-changes:
					default:
						return
					}
				}
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the watcher never heard the warm-up run's events")
}

// A payload that is not "<kind>:<run id>" on the channel is ignored; a
// listener whose connection the server closes reconnects and hears
// changes again.
func TestWatcherIgnoresForeignPayloadsAndReconnects(t *testing.T) {
	opts := freshPostgres(t)
	app := "wunder_watch_" + strings.TrimPrefix(schemaOf(t, opts.PostgresDSN), "wunder_test_")
	opts.PostgresDSN += "&application_name=" + app
	a, b := open(t, opts), open(t, opts)
	ctx := t.Context()
	must(t, b.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
	must(t, b.CreateRun(ctx, &orchestrator.Run{ID: "warm", SessionID: "s", UserID: "u", State: orchestrator.RunRunning, Owner: "x"}))
	changes := watch(t, a, b)

	_, err := b.db.ExecContext(ctx, `SELECT pg_notify(?, p) FROM unnest(ARRAY['garbage', 'e:', ':', 'c:r9']) WITH ORDINALITY AS t(p, i) ORDER BY i`, a.channel)
	must(t, err)
	select {
	case c := <-changes:
		if c != (orchestrator.RunChange{RunID: "r9", Cancel: true}) {
			t.Fatalf("first change %+v; want the cancel of r9, the payloads before it ignored", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}

	admin, err := sql.Open("pgx", postgresDSN(t))
	must(t, err)
	defer admin.Close()
	var pid int
	must(t, admin.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'`, app).Scan(&pid))
	terminate(t, uint32(pid))
	hearWarm(t, b, changes)
}

// The channel is named after the schema: a valid identifier that fits
// PostgreSQL's 63 bytes whatever the schema's name, the same for every
// replica, and another for another schema.
func TestNotifyChannelName(t *testing.T) {
	long := strings.Repeat("schema_é", 40)
	a, b := pgNotifyChannel(long), pgNotifyChannel(long+"x")
	if a != pgNotifyChannel(long) || a == b || len(a) > 63 || !regexp.MustCompile(`^[a-z_][a-z0-9_]*$`).MatchString(a) {
		t.Fatalf("channels %q and %q", a, b)
	}
	if s := open(t, freshSQLite(t)); s.payloads('e', []string{"r"}) != nil {
		t.Error("a SQLite store makes notifications")
	}
}
