package orchestratortest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/orchestrator"
)

// RunStoreTests runs the contract every [orchestrator.Store] passes, after
// adk-go's session/sessiontestsuite. newStore must return a fresh, empty
// store on every call (a new database file or schema for SQL backends). The
// suite closes each store when its test ends; the factory registers any
// other cleanup (removing files, dropping schemas) with t.Cleanup, which then
// runs after the close. Subtests call t.Parallel.
//
// Beyond the comments on [orchestrator.Store], the suite pins:
//
//   - Times round-trip at microsecond precision (truncated, not rounded) and
//     come back in UTC. Zero CreatedAt/UpdatedAt/Time values are set to the
//     store's clock on write, and written back through pointer arguments.
//   - Empty ids (and ttl <= 0, seq <= 0, nil pointers) are ErrInvalidArgument;
//     creating an existing session or run is ErrConflict.
//   - A message needs its session, a run its session and an event its run
//     (ErrNotFound otherwise, nothing written); a tool log needs nothing.
//   - ListSessions matches userID exactly (the empty user is a user);
//     RunFilter's empty fields match anything. Sessions list by UpdatedAt,
//     runs by CreatedAt, newest first, then Page applies; Page.Limit 0 is
//     the store's default (at least 100).
//   - ListMessages and ListEvents of an unknown parent return nothing, not an
//     error. Empty JSON (nil or zero-length) round-trips as nil.
//   - UpdateRun leaves id, session, user, question, model name and CreatedAt
//     as they were created.
//   - RenewLock succeeds for the owner while nobody else has taken the lock,
//     even past its expiry (as AcquireLock by the owner would).
//   - Stores return copies: mutating a result or an argument after the call
//     never changes what is stored.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) orchestrator.Store) {
	t.Helper()
	st := &storeSuite{newStore: newStore}
	for _, group := range []struct {
		name  string
		tests map[string]func(*testing.T)
	}{
		{"Session", st.sessionTests()},
		{"Message", st.messageTests()},
		{"Run", st.runTests()},
		{"Event", st.eventTests()},
		{"ToolLog", st.toolLogTests()},
		{"Lock", st.lockTests()},
	} {
		t.Run(group.name, func(t *testing.T) {
			for _, name := range slices.Sorted(maps.Keys(group.tests)) {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					group.tests[name](t)
				})
			}
		})
	}
}

type storeSuite struct {
	newStore func(t *testing.T) orchestrator.Store
}

// open returns a fresh store closed at the end of the test.
func (st *storeSuite) open(t *testing.T) orchestrator.Store {
	t.Helper()
	s := st.newStore(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s
}

// t0 is the suite's fixed clock: nanoseconds and a non-UTC zone on purpose,
// so every test also checks truncation to microseconds and conversion to UTC.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

func at(d time.Duration) time.Time { return t0.Add(d) }

// us is t as a store gives it back.
func us(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

func usp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := us(*t)
	return &v
}

func (st *storeSuite) sessionTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"CreateGet": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			in := &orchestrator.Session{ID: "s1", UserID: "u1", Title: "Grüße 🌍", CreatedAt: at(0), UpdatedAt: at(time.Second)}
			mustDo(t, "CreateSession", s.CreateSession(ctx, in))
			got, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			want := &orchestrator.Session{ID: "s1", UserID: "u1", Title: "Grüße 🌍", CreatedAt: us(at(0)), UpdatedAt: us(at(time.Second))}
			diff(t, "GetSession", want, got)
			checkUTC(t, got.CreatedAt, got.UpdatedAt)
		},
		"CreateFillsTimes": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			before := time.Now().Add(-time.Second)
			in := &orchestrator.Session{ID: "s1", UserID: "u1"}
			mustDo(t, "CreateSession", s.CreateSession(ctx, in))
			if in.CreatedAt.Before(before) || in.UpdatedAt.Before(before) {
				t.Fatalf("CreateSession left times %v, %v; want them set to now", in.CreatedAt, in.UpdatedAt)
			}
			got, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			diff(t, "GetSession", &orchestrator.Session{ID: "s1", UserID: "u1", CreatedAt: us(in.CreatedAt), UpdatedAt: us(in.UpdatedAt)}, got)
		},
		"CreateErrors": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			wantErr(t, "CreateSession(duplicate)", s.CreateSession(ctx, &orchestrator.Session{ID: "s1", UserID: "u2", CreatedAt: at(0), UpdatedAt: at(0)}), orchestrator.ErrConflict)
			wantErr(t, "CreateSession(empty id)", s.CreateSession(ctx, &orchestrator.Session{UserID: "u1"}), orchestrator.ErrInvalidArgument)
			wantErr(t, "CreateSession(nil)", s.CreateSession(ctx, nil), orchestrator.ErrInvalidArgument)
			got, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			if got.UserID != "u1" {
				t.Errorf("duplicate CreateSession overwrote the session: user %q", got.UserID)
			}
		},
		"GetMissing": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			_, err := s.GetSession(ctx, "nope")
			wantErr(t, "GetSession(missing)", err, orchestrator.ErrNotFound)
		},
		"ListOrderAndUser": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			for i, id := range []string{"a", "b", "c", "d"} {
				createSession(t, s, id, "u1", at(time.Duration(i)*time.Minute))
			}
			createSession(t, s, "other", "u2", at(time.Hour))
			createSession(t, s, "anon", "", at(time.Hour))
			wantSessionIDs(t, s, "u1", orchestrator.Page{}, "d", "c", "b", "a")
			wantSessionIDs(t, s, "u2", orchestrator.Page{}, "other")
			wantSessionIDs(t, s, "", orchestrator.Page{}, "anon")
			wantSessionIDs(t, s, "nobody", orchestrator.Page{})
			// UpdatedAt, not CreatedAt, orders the list.
			mustDo(t, "TouchSession", s.TouchSession(ctx, "a", "", at(10*time.Minute)))
			wantSessionIDs(t, s, "u1", orchestrator.Page{}, "a", "d", "c", "b")
		},
		"ListOrderSubsecond": func(t *testing.T) {
			// Order must hold across precision boundaries (a backend storing
			// times as text must not sort "…05Z" after "…05.1Z").
			s := st.open(t)
			base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			offsets := map[string]time.Duration{"f": 0, "e": time.Microsecond, "d": 100 * time.Millisecond,
				"c": 120 * time.Millisecond, "b": 999999 * time.Microsecond, "a": time.Second}
			for _, id := range []string{"c", "f", "a", "d", "b", "e"} {
				createSession(t, s, id, "u1", base.Add(offsets[id]))
			}
			wantSessionIDs(t, s, "u1", orchestrator.Page{}, "a", "b", "c", "d", "e", "f")
		},
		"ListPaging": func(t *testing.T) {
			s := st.open(t)
			for i := range 5 {
				createSession(t, s, fmt.Sprintf("s%d", i), "u1", at(time.Duration(i)*time.Second))
			}
			wantSessionIDs(t, s, "u1", orchestrator.Page{Limit: 2}, "s4", "s3")
			wantSessionIDs(t, s, "u1", orchestrator.Page{Limit: 2, Offset: 2}, "s2", "s1")
			wantSessionIDs(t, s, "u1", orchestrator.Page{Limit: 2, Offset: 4}, "s0")
			wantSessionIDs(t, s, "u1", orchestrator.Page{Offset: 3}, "s1", "s0")
			wantSessionIDs(t, s, "u1", orchestrator.Page{Offset: 5})
		},
		"ListDefaultLimit": func(t *testing.T) {
			s := st.open(t)
			for i := range 100 {
				createSession(t, s, fmt.Sprintf("s%03d", i), "u1", at(time.Duration(i)*time.Second))
			}
			wantLen(t, "ListSessions(Page{})", 100, size(s.ListSessions(t.Context(), "u1", orchestrator.Page{})))
		},
		"Touch": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			mustDo(t, "TouchSession", s.TouchSession(ctx, "s1", "New title", at(time.Hour)))
			got, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			diff(t, "after TouchSession", &orchestrator.Session{ID: "s1", UserID: "u1", Title: "New title", CreatedAt: us(at(0)), UpdatedAt: us(at(time.Hour))}, got)
			// An empty title keeps the title.
			mustDo(t, "TouchSession", s.TouchSession(ctx, "s1", "", at(2*time.Hour)))
			got, err = s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			diff(t, "after TouchSession(empty title)", &orchestrator.Session{ID: "s1", UserID: "u1", Title: "New title", CreatedAt: us(at(0)), UpdatedAt: us(at(2 * time.Hour))}, got)
			wantErr(t, "TouchSession(missing)", s.TouchSession(ctx, "nope", "x", at(0)), orchestrator.ErrNotFound)
		},
		"DeleteCascades": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			for _, id := range []string{"s1", "s2"} {
				createSession(t, s, id, "u1", at(0))
				mustDo(t, "AppendMessages", s.AppendMessages(ctx, id, []orchestrator.Message{{Role: "user", Content: "hi", CreatedAt: at(0)}}))
				createRun(t, s, "r-"+id, id, "u1", at(0))
				mustDo(t, "AppendEvents", s.AppendEvents(ctx, events("r-"+id, id, 1, 2, 3)))
				mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, &orchestrator.ToolLog{RunID: "r-" + id, SessionID: id, UserID: "u1", Tool: "t", CreatedAt: at(0)}))
			}
			mustDo(t, "DeleteSession", s.DeleteSession(ctx, "s1"))
			_, err := s.GetSession(ctx, "s1")
			wantErr(t, "GetSession(deleted)", err, orchestrator.ErrNotFound)
			_, err = s.GetRun(ctx, "r-s1")
			wantErr(t, "GetRun(of deleted session)", err, orchestrator.ErrNotFound)
			wantLen(t, "ListMessages(deleted)", 0, size(s.ListMessages(ctx, "s1", 0)))
			wantLen(t, "ListEvents(deleted)", 0, size(s.ListEvents(ctx, "r-s1", 0, 0)))
			wantLen(t, "ListRuns(deleted)", 0, size(s.ListRuns(ctx, orchestrator.RunFilter{SessionID: "s1"})))
			wantErr(t, "DeleteSession(again)", s.DeleteSession(ctx, "s1"), orchestrator.ErrNotFound)
			// The other session is untouched.
			wantLen(t, "ListMessages(other)", 1, size(s.ListMessages(ctx, "s2", 0)))
			wantLen(t, "ListEvents(other)", 3, size(s.ListEvents(ctx, "r-s2", 0, 0)))
			wantLen(t, "ListRuns(all)", 1, size(s.ListRuns(ctx, orchestrator.RunFilter{})))
			// The id can be used again, and starts empty.
			createSession(t, s, "s1", "u1", at(0))
			wantLen(t, "ListMessages(recreated)", 0, size(s.ListMessages(ctx, "s1", 0)))
		},
		"ReturnsCopies": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			in := createSession(t, s, "s1", "u1", at(0))
			in.Title = "changed after create"
			got, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			got.Title = "changed after get"
			list, err := s.ListSessions(ctx, "u1", orchestrator.Page{})
			mustDo(t, "ListSessions", err)
			if len(list) != 1 || list[0].Title != "" {
				t.Fatalf("store kept a caller's pointer: %+v", list)
			}
		},
	}
}

func (st *storeSuite) messageTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"AppendOrder": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createSession(t, s, "s2", "u1", at(0))
			var want []orchestrator.Message
			for i := range 7 {
				m := orchestrator.Message{Role: orchestrator.RoleUser, Content: fmt.Sprintf("m%d", i), RunID: "r1", CreatedAt: at(-time.Duration(i) * time.Second)}
				want = append(want, m)
			}
			// Append order wins over CreatedAt order.
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", want[:3]))
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s2", []orchestrator.Message{{Role: "user", Content: "elsewhere", CreatedAt: at(0)}}))
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", want[3:4]))
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", want[4:]))
			for i := range want {
				want[i].CreatedAt = us(want[i].CreatedAt)
			}
			for _, c := range []struct {
				limit int
				want  []orchestrator.Message
			}{{0, want}, {-1, want}, {3, want[4:]}, {1, want[6:]}, {7, want}, {100, want}} {
				got, err := s.ListMessages(ctx, "s1", c.limit)
				mustDo(t, "ListMessages", err)
				diff(t, fmt.Sprintf("ListMessages(limit %d)", c.limit), c.want, got)
			}
			wantLen(t, "ListMessages(unknown session)", 0, size(s.ListMessages(ctx, "nope", 0)))
		},
		"ToolCalls": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			in := []orchestrator.Message{
				{Role: orchestrator.RoleSystem, Content: "sys", CreatedAt: at(0)},
				{Role: orchestrator.RoleAssistant, ReasoningContent: "thinking… 🤔", CreatedAt: at(1), RunID: "r1",
					ToolCalls: []orchestrator.ToolCall{
						// Arguments keep their exact bytes: spacing, key order, escapes, even invalid JSON a model produced.
						{ID: "call_1", Name: "fs@read_file", Arguments: json.RawMessage(`{ "path": "a<b>.go",  "z": 1, "a": "\u00e9" }`)},
						{ID: "call_2", Name: "lsp@hover", Arguments: json.RawMessage(`{"broken": `)},
						{ID: "call_3", Name: "noargs"},
					}},
				{Role: orchestrator.RoleTool, Content: `{"ok":true}`, ToolCallID: "call_1", Name: "fs@read_file", RunID: "r1", CreatedAt: at(2)},
				{Role: orchestrator.RoleAssistant, Content: "done", ToolCalls: []orchestrator.ToolCall{}, CreatedAt: at(3)},
			}
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", in))
			want := cloneMessages(in)
			for i := range want {
				want[i].CreatedAt = us(want[i].CreatedAt)
			}
			want[3].ToolCalls = nil // empty round-trips as nil
			got, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			diff(t, "ListMessages", want, got)
		},
		"Errors": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			wantErr(t, "AppendMessages(unknown session)", s.AppendMessages(ctx, "nope", []orchestrator.Message{{Role: "user"}}), orchestrator.ErrNotFound)
			createSession(t, s, "s1", "u1", at(0))
			mustDo(t, "AppendMessages(empty)", s.AppendMessages(ctx, "s1", nil))
			wantLen(t, "ListMessages", 0, size(s.ListMessages(ctx, "s1", 0)))
		},
		"FillsTimeAndCopies": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			before := time.Now().Add(-time.Second)
			in := []orchestrator.Message{{Role: "assistant", ToolCalls: []orchestrator.ToolCall{{ID: "c", Name: "n", Arguments: json.RawMessage(`{"a":1}`)}}}}
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", in))
			in[0].ToolCalls[0].Arguments[2] = 'X'
			in[0].Content = "changed"
			got, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			if got[0].CreatedAt.Before(before) {
				t.Errorf("zero CreatedAt stored as %v; want now", got[0].CreatedAt)
			}
			got[0].ToolCalls[0].Arguments[2] = 'Y'
			again, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			if string(again[0].ToolCalls[0].Arguments) != `{"a":1}` || again[0].Content != "" {
				t.Errorf("stored message changed through a caller's slice: %+v", again[0])
			}
		},
	}
}

func (st *storeSuite) toolLogTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"Append": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createRun(t, s, "r1", "s1", "u1", at(0))
			l := &orchestrator.ToolLog{RunID: "r1", SessionID: "s1", UserID: "u1", CallID: "c1", Tool: "fs@read_file",
				Arguments: json.RawMessage(`{"path": "ü.txt"}`), Result: strings.Repeat("x", 70_000), IsError: true, DurationMS: 12, CreatedAt: at(0)}
			mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, l))
			// A tool log needs no run or session (direct tool calls have none).
			before := time.Now().Add(-time.Second)
			bare := &orchestrator.ToolLog{Tool: "builtin@now"}
			mustDo(t, "AppendToolLog(no run)", s.AppendToolLog(ctx, bare))
			if bare.CreatedAt.Before(before) {
				t.Errorf("AppendToolLog left CreatedAt %v; want now", bare.CreatedAt)
			}
			wantErr(t, "AppendToolLog(nil)", s.AppendToolLog(ctx, nil), orchestrator.ErrInvalidArgument)
		},
	}
}

func (st *storeSuite) runTests() map[string]func(*testing.T) {
	started, finished := at(time.Second), at(time.Minute)
	full := orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunFinished,
		StopReason: orchestrator.StopFinalTool, Question: "Wie spät? ⏰", Answer: "late", Error: "none",
		ModelName: "qwen", Usage: orchestrator.Usage{InputTokens: 1 << 40, OutputTokens: 2, TotalTokens: 1<<40 + 2},
		LastSeq: 42, CreatedAt: at(0), StartedAt: &started, FinishedAt: &finished}
	stored := func(r orchestrator.Run) *orchestrator.Run {
		r.CreatedAt, r.StartedAt, r.FinishedAt = us(r.CreatedAt), usp(r.StartedAt), usp(r.FinishedAt)
		return &r
	}
	return map[string]func(*testing.T){
		"CreateGet": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			in := full
			startedCopy := *full.StartedAt
			in.StartedAt = &startedCopy
			mustDo(t, "CreateRun", s.CreateRun(ctx, &in))
			startedCopy = at(time.Hour) // the store must not keep the caller's pointer
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun", stored(full), got)
			checkUTC(t, got.CreatedAt, *got.StartedAt, *got.FinishedAt)
			// Nil times stay nil.
			bare := orchestrator.Run{ID: "r2", SessionID: "s1", UserID: "u1", State: orchestrator.RunQueued, CreatedAt: at(0)}
			mustDo(t, "CreateRun", s.CreateRun(ctx, &bare))
			got, err = s.GetRun(ctx, "r2")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun(bare)", stored(bare), got)
		},
		"CreateErrors": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createRun(t, s, "r1", "s1", "u1", at(0))
			wantErr(t, "CreateRun(duplicate)", s.CreateRun(ctx, &orchestrator.Run{ID: "r1", SessionID: "s1"}), orchestrator.ErrConflict)
			wantErr(t, "CreateRun(unknown session)", s.CreateRun(ctx, &orchestrator.Run{ID: "r2", SessionID: "nope"}), orchestrator.ErrNotFound)
			wantErr(t, "CreateRun(empty id)", s.CreateRun(ctx, &orchestrator.Run{SessionID: "s1"}), orchestrator.ErrInvalidArgument)
			wantErr(t, "CreateRun(empty session)", s.CreateRun(ctx, &orchestrator.Run{ID: "r3"}), orchestrator.ErrInvalidArgument)
			wantErr(t, "CreateRun(nil)", s.CreateRun(ctx, nil), orchestrator.ErrInvalidArgument)
			_, err := s.GetRun(ctx, "r2")
			wantErr(t, "GetRun(after failed create)", err, orchestrator.ErrNotFound)
			_, err = s.GetRun(ctx, "nope")
			wantErr(t, "GetRun(missing)", err, orchestrator.ErrNotFound)
			before := time.Now().Add(-time.Second)
			r := &orchestrator.Run{ID: "r4", SessionID: "s1", State: orchestrator.RunQueued}
			mustDo(t, "CreateRun(zero time)", s.CreateRun(ctx, r))
			if r.CreatedAt.Before(before) {
				t.Errorf("CreateRun left CreatedAt %v; want now", r.CreatedAt)
			}
		},
		"Update": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createSession(t, s, "s2", "u2", at(0))
			initial := orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunQueued, Question: "q", ModelName: "m", CreatedAt: at(0)}
			in := initial
			mustDo(t, "CreateRun", s.CreateRun(ctx, &in))
			upd := full
			upd.SessionID, upd.UserID, upd.Question, upd.ModelName, upd.CreatedAt = "s2", "u2", "other", "other", at(time.Hour)
			mustDo(t, "UpdateRun", s.UpdateRun(ctx, &upd))
			want := full
			want.SessionID, want.UserID, want.Question, want.ModelName, want.CreatedAt = "s1", "u1", "q", "m", at(0)
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun after UpdateRun", stored(want), got)
			// Clearing a time stores nil.
			want.FinishedAt, want.State = nil, orchestrator.RunCancelling
			mustDo(t, "UpdateRun", s.UpdateRun(ctx, &want))
			got, err = s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun after clearing FinishedAt", stored(want), got)
			wantErr(t, "UpdateRun(missing)", s.UpdateRun(ctx, &orchestrator.Run{ID: "nope", SessionID: "s1"}), orchestrator.ErrNotFound)
			wantErr(t, "UpdateRun(nil)", s.UpdateRun(ctx, nil), orchestrator.ErrInvalidArgument)
			// The returned run is a copy.
			got.StartedAt = &finished
			got.State = orchestrator.RunFailed
			again, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun after mutating a result", stored(want), again)
		},
		"ListFilters": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createSession(t, s, "s2", "u1", at(0))
			createSession(t, s, "s3", "u2", at(0))
			for i, r := range []struct {
				id, sess, user string
				state          orchestrator.RunState
			}{
				{"r1", "s1", "u1", orchestrator.RunFinished}, {"r2", "s1", "u1", orchestrator.RunRunning},
				{"r3", "s2", "u1", orchestrator.RunQueued}, {"r4", "s3", "u2", orchestrator.RunFailed},
				{"r5", "s3", "u2", orchestrator.RunRunning},
			} {
				run := &orchestrator.Run{ID: r.id, SessionID: r.sess, UserID: r.user, State: r.state, CreatedAt: at(time.Duration(i) * time.Second)}
				mustDo(t, "CreateRun", s.CreateRun(ctx, run))
			}
			running, failed := orchestrator.RunRunning, orchestrator.RunFailed
			for _, c := range []struct {
				f    orchestrator.RunFilter
				want []string
			}{
				{orchestrator.RunFilter{}, []string{"r5", "r4", "r3", "r2", "r1"}},
				{orchestrator.RunFilter{UserID: "u1"}, []string{"r3", "r2", "r1"}},
				{orchestrator.RunFilter{SessionID: "s1"}, []string{"r2", "r1"}},
				{orchestrator.RunFilter{UserID: "u1", SessionID: "s3"}, []string{}},
				{orchestrator.RunFilter{UserID: "u2", SessionID: "s3"}, []string{"r5", "r4"}},
				{orchestrator.RunFilter{States: []orchestrator.RunState{running}}, []string{"r5", "r2"}},
				{orchestrator.RunFilter{UserID: "u2", States: []orchestrator.RunState{running, failed}}, []string{"r5", "r4"}},
				{orchestrator.RunFilter{States: []orchestrator.RunState{orchestrator.RunCancelled}}, []string{}},
				{orchestrator.RunFilter{Page: orchestrator.Page{Limit: 2}}, []string{"r5", "r4"}},
				{orchestrator.RunFilter{Page: orchestrator.Page{Limit: 2, Offset: 2}}, []string{"r3", "r2"}},
				{orchestrator.RunFilter{Page: orchestrator.Page{Offset: 4}}, []string{"r1"}},
				{orchestrator.RunFilter{UserID: "u1", Page: orchestrator.Page{Limit: 1, Offset: 1}}, []string{"r2"}},
			} {
				list, err := s.ListRuns(ctx, c.f)
				mustDo(t, "ListRuns", err)
				got := []string{}
				for _, r := range list {
					got = append(got, r.ID)
				}
				diff(t, fmt.Sprintf("ListRuns(%+v) ids", c.f), c.want, got)
			}
			list, err := s.ListRuns(ctx, orchestrator.RunFilter{SessionID: "s2"})
			mustDo(t, "ListRuns", err)
			diff(t, "ListRuns(s2)", []*orchestrator.Run{{ID: "r3", SessionID: "s2", UserID: "u1", State: orchestrator.RunQueued, CreatedAt: us(at(2 * time.Second))}}, list)
		},
	}
}

// events returns events of run with the given seqs, data {"n":seq}.
func events(run, session string, seqs ...int64) []orchestrator.Event {
	var out []orchestrator.Event
	for _, q := range seqs {
		out = append(out, orchestrator.Event{RunID: run, SessionID: session, Seq: q, Type: orchestrator.EventProgress,
			Data: json.RawMessage(fmt.Sprintf(`{"n": %d}`, q)), Time: at(time.Duration(q) * time.Millisecond)})
	}
	return out
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for q := from; q <= to; q++ {
		out = append(out, q)
	}
	return out
}

// wantSeqs checks the seqs ListEvents(run, after, limit) returns.
func wantSeqs(t *testing.T, s orchestrator.Store, run string, after int64, limit int, want []int64) {
	t.Helper()
	list, err := s.ListEvents(t.Context(), run, after, limit)
	mustDo(t, "ListEvents", err)
	got := []int64{}
	for _, e := range list {
		got = append(got, e.Seq)
	}
	if want == nil {
		want = []int64{}
	}
	diff(t, fmt.Sprintf("ListEvents(%s, after %d, limit %d) seqs", run, after, limit), want, got)
}

func createRun(t *testing.T, s orchestrator.Store, id, session, user string, created time.Time) {
	t.Helper()
	r := &orchestrator.Run{ID: id, SessionID: session, UserID: user, State: orchestrator.RunRunning, CreatedAt: created}
	mustDo(t, "CreateRun", s.CreateRun(t.Context(), r))
}

// withRun returns a store holding session s1 and run r1.
func (st *storeSuite) withRun(t *testing.T) orchestrator.Store {
	s := st.open(t)
	createSession(t, s, "s1", "u1", at(0))
	createRun(t, s, "r1", "s1", "u1", at(0))
	return s
}

func (st *storeSuite) eventTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"AppendList": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			mustDo(t, "AppendEvents", s.AppendEvents(ctx, events("r1", "s1", 1, 2, 3)))
			mustDo(t, "AppendEvents", s.AppendEvents(ctx, events("r1", "s1", 6, 4, 5))) // out of order
			mustDo(t, "AppendEvents", s.AppendEvents(ctx, events("r1", "s1", seqRange(7, 10)...)))
			want := events("r1", "s1", seqRange(1, 10)...)
			for i := range want {
				want[i].Time = us(want[i].Time)
			}
			got, err := s.ListEvents(ctx, "r1", 0, 0)
			mustDo(t, "ListEvents", err)
			diff(t, "ListEvents", want, got)
			checkUTC(t, got[0].Time)
			mustDo(t, "AppendEvents(empty)", s.AppendEvents(ctx, nil))
		},
		"AfterSeqLimit": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			mustDo(t, "AppendEvents", s.AppendEvents(ctx, events("r1", "s1", seqRange(1, 10)...)))
			wantSeqs(t, s, "r1", 3, 4, seqRange(4, 7))
			wantSeqs(t, s, "r1", 0, 0, seqRange(1, 10))
			wantSeqs(t, s, "r1", -5, -1, seqRange(1, 10))
			wantSeqs(t, s, "r1", 8, 5, seqRange(9, 10))
			wantSeqs(t, s, "r1", 10, 0, nil)
			wantSeqs(t, s, "r1", 0, 1, []int64{1})
			wantSeqs(t, s, "nope", 0, 0, nil)
		},
		"DuplicateIsAtomicConflict": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			createRun(t, s, "r2", "s1", "u1", at(0))
			mustDo(t, "AppendEvents", s.AppendEvents(ctx, events("r1", "s1", 1, 2, 3)))
			batch := append(events("r2", "s1", 1), events("r1", "s1", 4, 5, 2)...)
			wantErr(t, "AppendEvents(existing seq)", s.AppendEvents(ctx, batch), orchestrator.ErrConflict)
			wantErr(t, "AppendEvents(seq twice in batch)", s.AppendEvents(ctx, events("r1", "s1", 4, 5, 4)), orchestrator.ErrConflict)
			wantSeqs(t, s, "r1", 0, 0, []int64{1, 2, 3})
			wantSeqs(t, s, "r2", 0, 0, nil)
			mustDo(t, "AppendEvents(after conflict)", s.AppendEvents(ctx, events("r1", "s1", 4, 5)))
			wantSeqs(t, s, "r1", 0, 0, seqRange(1, 5))
		},
		"InvalidOrUnknownRun": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			wantErr(t, "AppendEvents(unknown run)", s.AppendEvents(ctx, append(events("r1", "s1", 1), events("nope", "s1", 1)...)), orchestrator.ErrNotFound)
			wantErr(t, "AppendEvents(seq 0)", s.AppendEvents(ctx, append(events("r1", "s1", 1), events("r1", "s1", 0)...)), orchestrator.ErrInvalidArgument)
			wantErr(t, "AppendEvents(empty run id)", s.AppendEvents(ctx, append(events("r1", "s1", 1), events("", "s1", 2)...)), orchestrator.ErrInvalidArgument)
			wantSeqs(t, s, "r1", 0, 0, nil)
		},
		"PayloadsRoundTrip": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			large := `{"blob": "` + strings.Repeat("0123456789abcdef", 1<<17) + `"}` // 2 MiB
			in := []orchestrator.Event{
				{RunID: "r1", SessionID: "s1", Seq: 1, Type: "llm_output_delta", Data: json.RawMessage(large), Time: at(0)},
				{RunID: "r1", SessionID: "s1", Seq: 2, Type: "progress", Time: at(0),
					Data: json.RawMessage("{ \"text\": \"日本語 עברית 🚀 e\u0301 \\u0000 \\\"q\\\" ' ; DROP TABLE events; --\" ,\n\t\"k\":[ ] }")},
				{RunID: "r1", SessionID: "s1", Seq: 3, Type: "ünïcödé_type", Data: nil, Time: at(0)},
				{RunID: "r1", SessionID: "s1", Seq: 4, Type: "final", Data: json.RawMessage(`null`), Time: at(0)},
				{RunID: "r1", SessionID: "s1", Seq: 5, Type: "final", Data: json.RawMessage(``), Time: at(0)},
			}
			mustDo(t, "AppendEvents", s.AppendEvents(ctx, in))
			got, err := s.ListEvents(ctx, "r1", 0, 0)
			mustDo(t, "ListEvents", err)
			if len(got) != len(in) {
				t.Fatalf("ListEvents returned %d events; want %d", len(got), len(in))
			}
			for i, e := range got {
				want := string(in[i].Data)
				if string(e.Data) != want || e.Type != in[i].Type {
					t.Errorf("event %d: type %q, data %.80q (len %d); want type %q, data %.80q (len %d)", i+1, e.Type, e.Data, len(e.Data), in[i].Type, want, len(want))
				}
				if len(in[i].Data) == 0 && e.Data != nil {
					t.Errorf("event %d: empty data came back as %q; want nil", i+1, e.Data)
				}
			}
			// Many events in one batch.
			mustDo(t, "AppendEvents(2000)", s.AppendEvents(ctx, events("r1", "s1", seqRange(6, 2005)...)))
			wantLen(t, "ListEvents", 2005, size(s.ListEvents(ctx, "r1", 0, 0)))
		},
		"FillsTimeAndCopies": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			before := time.Now().Add(-time.Second)
			in := []orchestrator.Event{{RunID: "r1", SessionID: "s1", Seq: 1, Type: "progress", Data: json.RawMessage(`{"a":1}`)}}
			mustDo(t, "AppendEvents", s.AppendEvents(ctx, in))
			in[0].Data[2] = 'X'
			got, err := s.ListEvents(ctx, "r1", 0, 0)
			mustDo(t, "ListEvents", err)
			if got[0].Time.Before(before) {
				t.Errorf("zero Time stored as %v; want now", got[0].Time)
			}
			got[0].Data[2] = 'Y'
			again, err := s.ListEvents(ctx, "r1", 0, 0)
			mustDo(t, "ListEvents", err)
			if string(again[0].Data) != `{"a":1}` {
				t.Errorf("stored event changed through a caller's slice: %s", again[0].Data)
			}
		},
		"ConcurrentRuns": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			const runs, batches, per = 8, 10, 4
			for i := range runs {
				createRun(t, s, fmt.Sprintf("c%d", i), "s1", "u1", at(0))
			}
			errs := make([]error, runs)
			race(runs, func(i int) {
				for b := range batches {
					from := int64(b*per + 1)
					if err := s.AppendEvents(ctx, events(fmt.Sprintf("c%d", i), "s1", seqRange(from, from+per-1)...)); err != nil {
						errs[i] = err
						return
					}
				}
			})
			for i := range runs {
				mustDo(t, fmt.Sprintf("AppendEvents(c%d)", i), errs[i])
				wantSeqs(t, s, fmt.Sprintf("c%d", i), 0, 0, seqRange(1, batches*per))
			}
		},
		"ConcurrentSameSeq": func(t *testing.T) {
			s, ctx := st.withRun(t), t.Context()
			const n = 8
			errs := make([]error, n)
			race(n, func(i int) {
				errs[i] = s.AppendEvents(ctx, []orchestrator.Event{{RunID: "r1", SessionID: "s1", Seq: 1, Type: "progress",
					Data: json.RawMessage(fmt.Sprintf(`{"writer":%d}`, i)), Time: at(0)}})
			})
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Errorf("writers %d and %d both stored seq 1", winner, i)
				case err == nil:
					winner = i
				default:
					wantErr(t, fmt.Sprintf("AppendEvents(writer %d)", i), err, orchestrator.ErrConflict)
				}
			}
			got, err := s.ListEvents(ctx, "r1", 0, 0)
			mustDo(t, "ListEvents", err)
			if len(got) != 1 || string(got[0].Data) != fmt.Sprintf(`{"writer":%d}`, winner) {
				t.Errorf("ListEvents = %+v; want the one event of writer %d", got, winner)
			}
		},
	}
}

func (st *storeSuite) lockTests() map[string]func(*testing.T) {
	const ttl = time.Minute
	// expire is long enough for slow CI and short enough to wait out.
	const expire, wait = 20 * time.Millisecond, 150 * time.Millisecond
	return map[string]func(*testing.T){
		"AcquireRelease": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			mustDo(t, "AcquireLock(free)", s.AcquireLock(ctx, "k", "a", ttl))
			mustDo(t, "AcquireLock(same owner)", s.AcquireLock(ctx, "k", "a", ttl))
			wantErr(t, "AcquireLock(other owner)", s.AcquireLock(ctx, "k", "b", ttl), orchestrator.ErrBusy)
			mustDo(t, "ReleaseLock(non-owner)", s.ReleaseLock(ctx, "k", "b"))
			wantErr(t, "AcquireLock(after non-owner release)", s.AcquireLock(ctx, "k", "b", ttl), orchestrator.ErrBusy)
			mustDo(t, "ReleaseLock(owner)", s.ReleaseLock(ctx, "k", "a"))
			mustDo(t, "AcquireLock(after release)", s.AcquireLock(ctx, "k", "b", ttl))
			wantErr(t, "AcquireLock(previous owner)", s.AcquireLock(ctx, "k", "a", ttl), orchestrator.ErrBusy)
			mustDo(t, "ReleaseLock(never held)", s.ReleaseLock(ctx, "free", "a"))
			// Keys are independent.
			mustDo(t, "AcquireLock(other key)", s.AcquireLock(ctx, "k2", "a", ttl))
		},
		"Renew": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", expire))
			mustDo(t, "RenewLock(owner)", s.RenewLock(ctx, "k", "a", ttl))
			time.Sleep(wait)
			wantErr(t, "AcquireLock(renewed lock)", s.AcquireLock(ctx, "k", "b", ttl), orchestrator.ErrBusy)
			wantErr(t, "RenewLock(non-owner)", s.RenewLock(ctx, "k", "b", ttl), orchestrator.ErrNotFound)
			wantErr(t, "RenewLock(missing)", s.RenewLock(ctx, "nope", "a", ttl), orchestrator.ErrNotFound)
			mustDo(t, "ReleaseLock", s.ReleaseLock(ctx, "k", "a"))
			wantErr(t, "RenewLock(released)", s.RenewLock(ctx, "k", "a", ttl), orchestrator.ErrNotFound)
			// Past expiry, with nobody else taking it, the owner may renew.
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k2", "a", expire))
			time.Sleep(wait)
			mustDo(t, "RenewLock(expired, untaken)", s.RenewLock(ctx, "k2", "a", ttl))
			wantErr(t, "AcquireLock(renewed lock)", s.AcquireLock(ctx, "k2", "b", ttl), orchestrator.ErrBusy)
		},
		"ExpiredTakenOver": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", expire))
			time.Sleep(wait)
			mustDo(t, "AcquireLock(expired, other owner)", s.AcquireLock(ctx, "k", "b", ttl))
			wantErr(t, "AcquireLock(previous owner)", s.AcquireLock(ctx, "k", "a", ttl), orchestrator.ErrBusy)
			wantErr(t, "RenewLock(previous owner)", s.RenewLock(ctx, "k", "a", ttl), orchestrator.ErrNotFound)
			mustDo(t, "ReleaseLock(previous owner)", s.ReleaseLock(ctx, "k", "a"))
			mustDo(t, "RenewLock(new owner)", s.RenewLock(ctx, "k", "b", ttl))
		},
		"Invalid": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			wantErr(t, "AcquireLock(ttl 0)", s.AcquireLock(ctx, "k", "a", 0), orchestrator.ErrInvalidArgument)
			wantErr(t, "AcquireLock(ttl < 0)", s.AcquireLock(ctx, "k", "a", -time.Second), orchestrator.ErrInvalidArgument)
			wantErr(t, "AcquireLock(empty key)", s.AcquireLock(ctx, "", "a", ttl), orchestrator.ErrInvalidArgument)
			wantErr(t, "AcquireLock(empty owner)", s.AcquireLock(ctx, "k", "", ttl), orchestrator.ErrInvalidArgument)
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", ttl))
			wantErr(t, "RenewLock(ttl 0)", s.RenewLock(ctx, "k", "a", 0), orchestrator.ErrInvalidArgument)
		},
		"ConcurrentAcquire": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			const n = 16
			for round := range 5 {
				key := fmt.Sprintf("race-%d", round)
				if round%2 == 1 { // odd rounds race for an expired lock
					mustDo(t, "AcquireLock", s.AcquireLock(ctx, key, "old", expire))
					time.Sleep(wait)
				}
				errs := make([]error, n)
				race(n, func(i int) { errs[i] = s.AcquireLock(ctx, key, fmt.Sprintf("owner-%d", i), ttl) })
				winners := 0
				for i, err := range errs {
					if err == nil {
						winners++
						mustDo(t, "RenewLock(winner)", s.RenewLock(ctx, key, fmt.Sprintf("owner-%d", i), ttl))
						continue
					}
					wantErr(t, fmt.Sprintf("round %d: AcquireLock(owner-%d)", round, i), err, orchestrator.ErrBusy)
				}
				if winners != 1 {
					t.Errorf("round %d: %d of %d concurrent AcquireLock calls won; want exactly 1", round, winners, n)
				}
			}
		},
	}
}

// Helpers shared by the suite's files.

func createSession(t *testing.T, s orchestrator.Store, id, user string, created time.Time) *orchestrator.Session {
	t.Helper()
	sess := &orchestrator.Session{ID: id, UserID: user, CreatedAt: created, UpdatedAt: created}
	mustDo(t, "CreateSession", s.CreateSession(t.Context(), sess))
	return sess
}

func wantSessionIDs(t *testing.T, s orchestrator.Store, user string, p orchestrator.Page, want ...string) {
	t.Helper()
	list, err := s.ListSessions(t.Context(), user, p)
	mustDo(t, "ListSessions", err)
	got := []string{}
	for _, x := range list {
		got = append(got, x.ID)
	}
	if want == nil {
		want = []string{}
	}
	diff(t, fmt.Sprintf("ListSessions(%q, %+v) ids", user, p), want, got)
}

func cloneMessages(in []orchestrator.Message) []orchestrator.Message {
	out := make([]orchestrator.Message, len(in))
	for i, m := range in {
		out[i] = m
		if m.ToolCalls != nil {
			out[i].ToolCalls = make([]orchestrator.ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.Arguments = append(json.RawMessage(nil), c.Arguments...)
				if len(c.Arguments) == 0 {
					c.Arguments = nil
				}
				out[i].ToolCalls[j] = c
			}
		}
	}
	return out
}

func mustDo(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v; want an error wrapping %q", what, err, target)
	}
}

// listLen is the outcome of a listing call, for wantLen.
type listLen struct {
	n   int
	err error
}

func size[T any](got []T, err error) listLen { return listLen{len(got), err} }

// wantLen checks a listing's length: wantLen(t, what, n, size(s.List...(...))).
func wantLen(t *testing.T, what string, n int, got listLen) {
	t.Helper()
	mustDo(t, what, got.err)
	if got.n != n {
		t.Errorf("%s returned %d items; want %d", what, got.n, n)
	}
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

func checkUTC(t *testing.T, times ...time.Time) {
	t.Helper()
	for _, tm := range times {
		if tm.Location() != time.UTC {
			t.Errorf("time %v is in %v; stores return UTC", tm, tm.Location())
		}
	}
}

// race runs fn(i) for i in [0,n) in n goroutines released at once.
func race(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}
