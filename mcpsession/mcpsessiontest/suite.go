// Package mcpsessiontest holds the contract every [mcpsession.Store]
// passes ([RunStoreTests]; storage runs it on SQLite and PostgreSQL, and
// mcpsession on its in-memory store).
package mcpsessiontest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/storetest"
	"github.com/wunder/wunder/mcpsession"
	"github.com/wunder/wunder/orchestrator"
)

// RunStoreTests runs the contract every [mcpsession.Store] passes.
// newStore returns a fresh, empty store on every call and registers its
// own cleanup with t.Cleanup.
//
// Beyond the comments on [mcpsession.Store], the suite pins: times
// round-trip at microsecond precision in UTC; JSON fields round-trip as
// JSON; a touch never moves UsedAt back; events of different sessions and
// streams are apart; keep drops the oldest events and indexes go on.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) mcpsession.Store) {
	t.Helper()
	tests := map[string]func(t *testing.T, s mcpsession.Store){
		"RoundTrip": testRoundTrip,
		"Conflict":  testConflict,
		"Touch":     testTouch,
		"State":     testState,
		"Close":     testClose,
		"Purge":     testPurge,
		"Trim":      testTrim,
		"Events":    testEvents,
		"EventKeep": testEventKeep,
	}
	for name, fn := range tests {
		t.Run("MCPSession/"+name, func(t *testing.T) {
			t.Parallel()
			fn(t, newStore(t))
		})
	}
}

func session(id string, used time.Duration) *mcpsession.Session {
	return &mcpsession.Session{ID: id, UserID: "alice", Route: "fs", ProtocolVersion: "2025-11-25",
		InitParams: json.RawMessage(`{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}`),
		State:      json.RawMessage(`{"logLevel":"info"}`), CreatedAt: storetest.At(0), UsedAt: storetest.At(used)}
}

// sameJSON compares JSON documents by value.
func sameJSON(t *testing.T, what string, want, got json.RawMessage) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want is not JSON: %v", what, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: got %q, not JSON: %v", what, got, err)
	}
	storetest.Diff(t, what, w, g)
}

func testRoundTrip(t *testing.T, s mcpsession.Store) {
	in := session("s1", time.Second)
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), in))
	got, err := s.MCPSession(t.Context(), "s1")
	storetest.MustDo(t, "MCPSession", err)
	storetest.Diff(t, "fields", []string{in.ID, in.UserID, in.Route, in.ProtocolVersion}, []string{got.ID, got.UserID, got.Route, got.ProtocolVersion})
	sameJSON(t, "InitParams", in.InitParams, got.InitParams)
	sameJSON(t, "State", in.State, got.State)
	storetest.Diff(t, "CreatedAt", storetest.US(in.CreatedAt), got.CreatedAt.UTC())
	storetest.Diff(t, "UsedAt", storetest.US(in.UsedAt), got.UsedAt.UTC())
	_, err = s.MCPSession(t.Context(), "nope")
	storetest.WantErr(t, "MCPSession(unknown)", err, orchestrator.ErrNotFound)
	// A record without a user (the API key's) round-trips as such.
	anon := session("s2", 0)
	anon.UserID, anon.Route = "", ""
	storetest.MustDo(t, "CreateMCPSession(anon)", s.CreateMCPSession(t.Context(), anon))
	got, err = s.MCPSession(t.Context(), "s2")
	storetest.MustDo(t, "MCPSession(anon)", err)
	storetest.Diff(t, "anon user, route", []string{"", ""}, []string{got.UserID, got.Route})
}

func testConflict(t *testing.T, s mcpsession.Store) {
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), session("s1", 0)))
	other := session("s1", 0)
	other.UserID = "mallory"
	storetest.WantErr(t, "CreateMCPSession(same id)", s.CreateMCPSession(t.Context(), other), orchestrator.ErrConflict)
	got, err := s.MCPSession(t.Context(), "s1")
	storetest.MustDo(t, "MCPSession", err)
	storetest.Diff(t, "owner kept", "alice", got.UserID)
}

func testTouch(t *testing.T, s mcpsession.Store) {
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), session("s1", time.Minute)))
	storetest.MustDo(t, "Touch later", s.TouchMCPSession(t.Context(), "s1", storetest.At(time.Hour)))
	storetest.MustDo(t, "Touch earlier", s.TouchMCPSession(t.Context(), "s1", storetest.At(2*time.Minute)))
	got, err := s.MCPSession(t.Context(), "s1")
	storetest.MustDo(t, "MCPSession", err)
	storetest.Diff(t, "UsedAt", storetest.US(storetest.At(time.Hour)), got.UsedAt.UTC())
	if !got.Expired(storetest.At(2*time.Hour), 30*time.Minute) || got.Expired(storetest.At(time.Hour+time.Minute), 30*time.Minute) {
		t.Errorf("Expired: idle 1h/30m ttl should be expired, idle 1m should not")
	}
	storetest.WantErr(t, "Touch(unknown)", s.TouchMCPSession(t.Context(), "nope", storetest.At(0)), orchestrator.ErrNotFound)
}

func testState(t *testing.T, s mcpsession.Store) {
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), session("s1", 0)))
	state := json.RawMessage(`{"logLevel":"debug","upstream":"abc"}`)
	storetest.MustDo(t, "SetMCPSessionState", s.SetMCPSessionState(t.Context(), "s1", state))
	got, err := s.MCPSession(t.Context(), "s1")
	storetest.MustDo(t, "MCPSession", err)
	sameJSON(t, "State", state, got.State)
	storetest.WantErr(t, "SetMCPSessionState(unknown)", s.SetMCPSessionState(t.Context(), "nope", state), orchestrator.ErrNotFound)
}

func testClose(t *testing.T, s mcpsession.Store) {
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), session("s1", 0)))
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), session("s2", 0)))
	for _, id := range []string{"s1", "s2"} {
		storetest.MustDo(t, "AppendMCPEvent", s.AppendMCPEvent(t.Context(), id, "st", []byte(`{"n":1}`), 0))
	}
	storetest.MustDo(t, "CloseMCPSession", s.CloseMCPSession(t.Context(), "s1"))
	_, err := s.MCPSession(t.Context(), "s1")
	storetest.WantErr(t, "MCPSession(closed)", err, orchestrator.ErrNotFound)
	evs, err := s.MCPEvents(t.Context(), "s1", "st", -1)
	storetest.MustDo(t, "MCPEvents(closed)", err)
	storetest.Diff(t, "closed session's events", 0, len(evs))
	evs, err = s.MCPEvents(t.Context(), "s2", "st", -1)
	storetest.MustDo(t, "MCPEvents(other)", err)
	storetest.Diff(t, "other session's events", 1, len(evs))
	storetest.MustDo(t, "CloseMCPSession(again)", s.CloseMCPSession(t.Context(), "s1"))
}

func testPurge(t *testing.T, s mcpsession.Store) {
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), session("old", time.Minute)))
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(t.Context(), session("new", time.Hour)))
	storetest.MustDo(t, "AppendMCPEvent", s.AppendMCPEvent(t.Context(), "old", "st", []byte(`1`), 0))
	n, err := s.PurgeMCPSessions(t.Context(), storetest.At(30*time.Minute))
	storetest.MustDo(t, "PurgeMCPSessions", err)
	storetest.Diff(t, "purged", 1, n)
	_, err = s.MCPSession(t.Context(), "old")
	storetest.WantErr(t, "MCPSession(purged)", err, orchestrator.ErrNotFound)
	_, err = s.MCPSession(t.Context(), "new")
	storetest.MustDo(t, "MCPSession(kept)", err)
	evs, err := s.MCPEvents(t.Context(), "old", "st", -1)
	storetest.MustDo(t, "MCPEvents(purged)", err)
	storetest.Diff(t, "purged session's events", 0, len(evs))
}

func testTrim(t *testing.T, s mcpsession.Store) {
	ctx := t.Context()
	mk := func(id, user, route string, used time.Duration) {
		t.Helper()
		in := session(id, used)
		in.UserID, in.Route = user, route
		storetest.MustDo(t, "CreateMCPSession "+id, s.CreateMCPSession(ctx, in))
		storetest.MustDo(t, "AppendMCPEvent "+id, s.AppendMCPEvent(ctx, id, "st", []byte(`1`), 0))
	}
	// alice has five on route fs (u1 the least recently used; u4 and u5
	// used at once, u5 created later), two on route x; bob one on fs.
	for i, used := range []time.Duration{1, 2, 3, 4, 4} {
		in := session(fmt.Sprintf("u%d", i+1), used*time.Minute)
		in.CreatedAt = storetest.At(time.Duration(i) * time.Second)
		storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(ctx, in))
		storetest.MustDo(t, "AppendMCPEvent", s.AppendMCPEvent(ctx, in.ID, "st", []byte(`1`), 0))
	}
	mk("x1", "alice", "x", 0)
	mk("x2", "alice", "x", 0)
	mk("b1", "bob", "fs", 0)

	ids, err := s.TrimMCPSessions(ctx, "alice", "fs", 3)
	storetest.MustDo(t, "TrimMCPSessions", err)
	slices.Sort(ids)
	storetest.Diff(t, "trimmed", []string{"u1", "u2"}, ids)
	for _, id := range []string{"u1", "u2"} {
		_, err := s.MCPSession(ctx, id)
		storetest.WantErr(t, "MCPSession(trimmed "+id+")", err, orchestrator.ErrNotFound)
		evs, err := s.MCPEvents(ctx, id, "st", -1)
		storetest.MustDo(t, "MCPEvents(trimmed)", err)
		storetest.Diff(t, "trimmed session's events", 0, len(evs))
	}
	for _, id := range []string{"u3", "u4", "u5", "x1", "x2", "b1"} {
		_, err := s.MCPSession(ctx, id)
		storetest.MustDo(t, "MCPSession(kept "+id+")", err)
	}
	ids, err = s.TrimMCPSessions(ctx, "alice", "fs", 3)
	storetest.MustDo(t, "TrimMCPSessions(again)", err)
	storetest.Diff(t, "trimmed again", 0, len(ids))
	// The tie on UsedAt goes to the later one: u4 goes, u5 stays.
	ids, err = s.TrimMCPSessions(ctx, "alice", "fs", 1)
	storetest.MustDo(t, "TrimMCPSessions(1)", err)
	slices.Sort(ids)
	storetest.Diff(t, "trimmed to one", []string{"u3", "u4"}, ids)
	_, err = s.MCPSession(ctx, "u5")
	storetest.MustDo(t, "MCPSession(u5)", err)
}

func datas(evs []mcpsession.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%d:%s", e.Index, e.Data))
	}
	return out
}

func testEvents(t *testing.T, s mcpsession.Store) {
	ctx := t.Context()
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(ctx, session("s1", 0)))
	storetest.MustDo(t, "Append prime", s.AppendMCPEvent(ctx, "s1", "a", nil, 0))
	for _, d := range []string{`{"x":1}`, `{"x":2}`} {
		storetest.MustDo(t, "Append a", s.AppendMCPEvent(ctx, "s1", "a", []byte(d), 0))
	}
	storetest.MustDo(t, "Append b", s.AppendMCPEvent(ctx, "s1", "b", []byte(`{"y":1}`), 0))
	storetest.MustDo(t, "Append other session", s.AppendMCPEvent(ctx, "s2", "a", []byte(`{"z":1}`), 0))
	evs, err := s.MCPEvents(ctx, "s1", "a", -1)
	storetest.MustDo(t, "MCPEvents", err)
	storetest.Diff(t, "stream a", []string{`0:`, `1:{"x":1}`, `2:{"x":2}`}, datas(evs))
	evs, err = s.MCPEvents(ctx, "s1", "a", 1)
	storetest.MustDo(t, "MCPEvents(after 1)", err)
	storetest.Diff(t, "stream a after 1", []string{`2:{"x":2}`}, datas(evs))
	evs, err = s.MCPEvents(ctx, "s1", "a", 2)
	storetest.MustDo(t, "MCPEvents(after last)", err)
	storetest.Diff(t, "stream a after last", 0, len(evs))
	evs, err = s.MCPEvents(ctx, "s1", "b", -1)
	storetest.MustDo(t, "MCPEvents(b)", err)
	storetest.Diff(t, "stream b", []string{`0:{"y":1}`}, datas(evs))
	evs, err = s.MCPEvents(ctx, "s1", "none", -1)
	storetest.MustDo(t, "MCPEvents(unknown stream)", err)
	storetest.Diff(t, "unknown stream", 0, len(evs))
}

func testEventKeep(t *testing.T, s mcpsession.Store) {
	ctx := t.Context()
	storetest.MustDo(t, "CreateMCPSession", s.CreateMCPSession(ctx, session("s1", 0)))
	for i := range 5 {
		storetest.MustDo(t, "Append", s.AppendMCPEvent(ctx, "s1", "a", fmt.Appendf(nil, "%d", i*10), 3))
	}
	evs, err := s.MCPEvents(ctx, "s1", "a", -1)
	storetest.MustDo(t, "MCPEvents", err)
	storetest.Diff(t, "kept newest 3", []string{`2:20`, `3:30`, `4:40`}, datas(evs))
}
