package orchestratortest

import (
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// lifecycleTests pin the writes that start and end a run in one go:
// CreateRunWith stores all or nothing, and EndRun stores the end, the
// session's time and the freed locks together, or nothing when the
// owner's fence refuses it.
func (st *storeSuite) lifecycleTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"CreateRunWith": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			sess := &orchestrator.Session{ID: "s1", UserID: "u1", Title: "first", CreatedAt: at(0)}
			r := &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunQueued, Question: "q", Owner: "a", CreatedAt: at(0)}
			q := orchestrator.Message{Role: orchestrator.RoleUser, Content: "q", RunID: "r1", CreatedAt: at(0),
				Attachments: []orchestrator.Attachment{{Type: "text", Name: "notes.txt", Content: "hello"}}}
			mustDo(t, "CreateRunWith(new session)", s.CreateRunWith(ctx, sess, r, orchestrator.RunTail{Messages: []orchestrator.Message{q}}))
			gotS, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			gotR, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			if gotS.UserID != "u1" || gotS.Title != "first" || !gotS.UpdatedAt.Equal(stamp(at(0))) || gotR.SessionID != "s1" || gotR.Question != "q" || gotR.Owner != "a" {
				t.Fatalf("stored %+v and %+v", gotS, gotR)
			}
			// A run of the existing session, with its question.
			r2 := &orchestrator.Run{ID: "r2", SessionID: "s1", UserID: "u1", State: orchestrator.RunRunning, Question: "q2", Owner: "a", CreatedAt: at(1)}
			mustDo(t, "CreateRunWith(existing session)", s.CreateRunWith(ctx, nil, r2,
				orchestrator.RunTail{Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: "q2", RunID: "r2", CreatedAt: at(1)}}}))
			msgs, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			if len(msgs) != 2 || msgs[0].RunID != "r1" || msgs[0].Content != "q" || len(msgs[0].Attachments) != 1 || msgs[0].Attachments[0].Name != "notes.txt" ||
				msgs[1].RunID != "r2" || msgs[1].Content != "q2" {
				t.Fatalf("history = %+v; want the two questions in order, the first with its attachment", msgs)
			}
			// The run exists: nothing is stored, the session id stays free.
			again := &orchestrator.Run{ID: "r1", SessionID: "s2", UserID: "u1", State: orchestrator.RunQueued, Owner: "a", CreatedAt: at(2)}
			wantErr(t, "CreateRunWith(run exists)", s.CreateRunWith(ctx, &orchestrator.Session{ID: "s2", UserID: "u1", CreatedAt: at(2)}, again,
				orchestrator.RunTail{Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: "lost", RunID: "r1"}}}), orchestrator.ErrConflict)
			wantErr(t, "GetSession(s2)", func() error { _, err := s.GetSession(ctx, "s2"); return err }(), orchestrator.ErrNotFound)
			if msgs, _ := s.ListMessages(ctx, "s2", 0); len(msgs) != 0 {
				t.Fatalf("a refused CreateRunWith left messages %+v", msgs)
			}
			// The session exists: neither the run nor its question is stored.
			other := &orchestrator.Run{ID: "r3", SessionID: "s1", UserID: "u1", State: orchestrator.RunQueued, Owner: "a", CreatedAt: at(2)}
			wantErr(t, "CreateRunWith(session exists)", s.CreateRunWith(ctx, &orchestrator.Session{ID: "s1", UserID: "u1", CreatedAt: at(2)}, other,
				orchestrator.RunTail{Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: "lost", RunID: "r3"}}}), orchestrator.ErrConflict)
			wantErr(t, "GetRun(r3)", func() error { _, err := s.GetRun(ctx, "r3"); return err }(), orchestrator.ErrNotFound)
			// No such session.
			wantErr(t, "CreateRunWith(missing session)", s.CreateRunWith(ctx, nil,
				&orchestrator.Run{ID: "r4", SessionID: "nope", UserID: "u1", State: orchestrator.RunQueued, Owner: "a"}, orchestrator.RunTail{}), orchestrator.ErrNotFound)
			if msgs, _ := s.ListMessages(ctx, "s1", 0); len(msgs) != 2 {
				t.Fatalf("refused creations changed the history: %+v", msgs)
			}
			wantErr(t, "CreateRunWith(run of another session)",
				s.CreateRunWith(ctx, &orchestrator.Session{ID: "s3", UserID: "u1"}, &orchestrator.Run{ID: "r5", SessionID: "s1", Owner: "a"}, orchestrator.RunTail{}), orchestrator.ErrInvalidArgument)
		},
		"CreateRunWithEvents": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			const ttl = time.Hour
			sess := &orchestrator.Session{ID: "s1", UserID: "u1", CreatedAt: at(0)}
			r := &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunRunning, Owner: "a", CreatedAt: at(0)}
			ev := func(runID string, seq int64) orchestrator.Event {
				return orchestrator.Event{RunID: runID, SessionID: "s1", Seq: seq, Type: orchestrator.EventProgress, Data: []byte(`{"n":1}`), Time: at(0)}
			}
			tail := orchestrator.RunTail{
				Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: "q", RunID: "r1", CreatedAt: at(0)}},
				Events:   []orchestrator.Event{ev("r1", 1), ev("r1", 2)},
			}
			mustDo(t, "CreateRunWith(events)", s.CreateRunWith(ctx, sess, r, tail, orchestrator.NewLock{Key: "session:s1", TTL: ttl}))
			evs, err := s.ListEvents(ctx, "r1", 0, 0)
			mustDo(t, "ListEvents", err)
			if len(evs) != 2 || evs[0].Seq != 1 || evs[1].Seq != 2 {
				t.Fatalf("events = %+v; want seq 1 and 2", evs)
			}
			// The log goes on after them.
			mustDo(t, "AppendEvents(3)", s.AppendEvents(ctx, []orchestrator.Event{ev("r1", 3)}))
			// An event refused (its seq is taken) stores nothing at all.
			r2 := &orchestrator.Run{ID: "r2", SessionID: "s2", UserID: "u1", State: orchestrator.RunRunning, Owner: "a", CreatedAt: at(1)}
			bad := orchestrator.RunTail{Events: []orchestrator.Event{ev("r2", 1), ev("r2", 1)}}
			if err := s.CreateRunWith(ctx, &orchestrator.Session{ID: "s2", UserID: "u1", CreatedAt: at(1)}, r2, bad, orchestrator.NewLock{Key: "session:s2", TTL: ttl}); err == nil {
				t.Fatal("CreateRunWith with a seq twice: no error")
			}
			wantErr(t, "GetRun(r2)", func() error { _, err := s.GetRun(ctx, "r2"); return err }(), orchestrator.ErrNotFound)
			wantErr(t, "GetSession(s2)", func() error { _, err := s.GetSession(ctx, "s2"); return err }(), orchestrator.ErrNotFound)
			mustDo(t, "AcquireLock(s2's, not taken)", s.AcquireLock(ctx, "session:s2", "r9", ttl))
		},
		"CreateRunWithLock": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			const ttl = time.Hour
			sess := &orchestrator.Session{ID: "s1", UserID: "u1", CreatedAt: at(0)}
			r := &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunRunning, Owner: "a", CreatedAt: at(0)}
			mustDo(t, "CreateRunWith(lock)", s.CreateRunWith(ctx, sess, r, orchestrator.RunTail{}, orchestrator.NewLock{Key: "session:s1", TTL: ttl}))
			// Held by the run: another owner is refused, the run renews it.
			wantErr(t, "AcquireLock(another owner)", s.AcquireLock(ctx, "session:s1", "r9", ttl), orchestrator.ErrBusy)
			mustDo(t, "RenewLock(the run)", s.RenewLock(ctx, "session:s1", "r1", ttl))
			// Refused with the run: the lock is not taken either.
			dup := &orchestrator.Run{ID: "r1", SessionID: "s2", UserID: "u1", State: orchestrator.RunQueued, Owner: "a", CreatedAt: at(1)}
			wantErr(t, "CreateRunWith(run exists, lock)", s.CreateRunWith(ctx, &orchestrator.Session{ID: "s2", UserID: "u1", CreatedAt: at(1)}, dup, orchestrator.RunTail{},
				orchestrator.NewLock{Key: "session:s2", TTL: ttl}), orchestrator.ErrConflict)
			mustDo(t, "AcquireLock(s2's, not taken)", s.AcquireLock(ctx, "session:s2", "r9", ttl))
			// A lock that exists fails the write, which stores nothing.
			r3 := &orchestrator.Run{ID: "r3", SessionID: "s3", UserID: "u1", State: orchestrator.RunQueued, Owner: "a", CreatedAt: at(2)}
			wantErr(t, "CreateRunWith(lock exists)", s.CreateRunWith(ctx, &orchestrator.Session{ID: "s3", UserID: "u1", CreatedAt: at(2)}, r3, orchestrator.RunTail{},
				orchestrator.NewLock{Key: "session:s2", TTL: ttl}), orchestrator.ErrConflict)
			wantErr(t, "GetRun(r3)", func() error { _, err := s.GetRun(ctx, "r3"); return err }(), orchestrator.ErrNotFound)
			wantErr(t, "GetSession(s3)", func() error { _, err := s.GetSession(ctx, "s3"); return err }(), orchestrator.ErrNotFound)
			wantErr(t, "CreateRunWith(bad lock)", s.CreateRunWith(ctx, nil, &orchestrator.Run{ID: "r4", SessionID: "s1", Owner: "a"}, orchestrator.RunTail{},
				orchestrator.NewLock{Key: "", TTL: ttl}), orchestrator.ErrInvalidArgument)
			// EndRun frees it.
			r.State = orchestrator.RunFinished
			mustDo(t, "EndRun", s.EndRun(ctx, r, at(3), []string{"session:s1"}, orchestrator.RunTail{}))
			mustDo(t, "AcquireLock(after the end)", s.AcquireLock(ctx, "session:s1", "r9", ttl))
		},
		"EndRun": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			r := runningWithLock(t, s)
			const ttl = time.Hour
			mustDo(t, "AcquireLock(user)", s.AcquireLock(ctx, "user:u1", "r1", ttl))
			mustDo(t, "AcquireLock(other's)", s.AcquireLock(ctx, "user:u2", "r9", ttl))

			// Fenced: another owner's end writes nothing at all.
			late := *r
			late.Owner, late.State, late.Answer = "b", orchestrator.RunFinished, "late"
			wantErr(t, "EndRun(not the owner)", s.EndRun(ctx, &late, at(5), []string{"session:s1", "user:u1"}, orchestrator.RunTail{}), orchestrator.ErrConflict)
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			sess, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			if got.State != orchestrator.RunRunning || got.Answer != "" || !sess.UpdatedAt.Equal(stamp(at(0))) {
				t.Fatalf("after a fenced end: run %+v, session %+v; want both untouched", got, sess)
			}
			wantErr(t, "AcquireLock(session, still held)", s.AcquireLock(ctx, "session:s1", "r2", ttl), orchestrator.ErrBusy)

			done := *r
			fin := at(7)
			done.State, done.StopReason, done.Answer, done.LastSeq, done.FinishedAt = orchestrator.RunFinished, orchestrator.StopModelResponse, "ok", 9, &fin
			mustDo(t, "EndRun", s.EndRun(ctx, &done, at(7), []string{"session:s1", "user:u1", "user:u2"}, orchestrator.RunTail{}))
			got, err = s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			sess, err = s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			if got.State != orchestrator.RunFinished || got.Answer != "ok" || got.LastSeq != 9 || got.FinishedAt == nil || !got.FinishedAt.Equal(stamp(fin)) || !sess.UpdatedAt.Equal(stamp(at(7))) {
				t.Fatalf("after EndRun: run %+v, session %+v", got, sess)
			}
			mustDo(t, "AcquireLock(session, freed)", s.AcquireLock(ctx, "session:s1", "r2", ttl))
			mustDo(t, "AcquireLock(user, freed)", s.AcquireLock(ctx, "user:u1", "r2", ttl))
			// A lock of another owner among the keys is left alone.
			wantErr(t, "AcquireLock(other's, kept)", s.AcquireLock(ctx, "user:u2", "r3", ttl), orchestrator.ErrBusy)
			wantErr(t, "EndRun(missing)", s.EndRun(ctx, &orchestrator.Run{ID: "nope", Owner: "a"}, at(8), nil, orchestrator.RunTail{}), orchestrator.ErrNotFound)
		},
		"CreateRunWith(ended)": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			fin := at(4)
			sess := &orchestrator.Session{ID: "s1", UserID: "u1", Title: "first", CreatedAt: at(0), UpdatedAt: at(4)}
			r := &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunFinished, StopReason: orchestrator.StopModelResponse,
				Question: "q", Answer: "a", Owner: "o", LastSeq: 2, CreatedAt: at(0), FinishedAt: &fin}
			ev := func(run string, seq int64, typ string) orchestrator.Event {
				return orchestrator.Event{RunID: run, SessionID: "s1", Seq: seq, Type: typ, Data: []byte(`{"n":1}`), Time: at(time.Duration(seq))}
			}
			tail := orchestrator.RunTail{
				Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: "q", RunID: "r1", CreatedAt: at(0)},
					{Role: orchestrator.RoleAssistant, Content: "a", RunID: "r1", CreatedAt: at(3)}},
				Events: []orchestrator.Event{ev("r1", 1, "progress"), ev("r1", 2, "final")},
			}
			// Refused whole: an event of the tail that is invalid, and one of
			// another run, leave nothing.
			bad := tail
			bad.Events = []orchestrator.Event{ev("r1", 1, "progress"), {RunID: "r1"}}
			wantErr(t, "CreateRunWith(ended, bad event)", s.CreateRunWith(ctx, sess, r, bad), orchestrator.ErrInvalidArgument)
			wantErr(t, "GetSession(after a refusal)", func() error { _, err := s.GetSession(ctx, "s1"); return err }(), orchestrator.ErrNotFound)
			wantErr(t, "GetRun(after a refusal)", func() error { _, err := s.GetRun(ctx, "r1"); return err }(), orchestrator.ErrNotFound)
			wantErr(t, "CreateRunWith(ended, run of another session)", s.CreateRunWith(ctx, &orchestrator.Session{ID: "s9", UserID: "u1"}, r, tail), orchestrator.ErrInvalidArgument)

			mustDo(t, "CreateRunWith(ended)", s.CreateRunWith(ctx, sess, r, tail))
			gotS, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			gotR, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			if gotS.UserID != "u1" || gotS.Title != "first" || !gotS.UpdatedAt.Equal(stamp(at(4))) {
				t.Fatalf("session = %+v; want u1's, touched at the run's end", gotS)
			}
			if gotR.State != orchestrator.RunFinished || gotR.Answer != "a" || gotR.LastSeq != 2 || gotR.FinishedAt == nil || !gotR.FinishedAt.Equal(stamp(fin)) {
				t.Fatalf("run = %+v; want it as it ended", gotR)
			}
			msgs, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			if len(msgs) != 2 || msgs[0].Content != "q" || msgs[1].Content != "a" || msgs[1].RunID != "r1" {
				t.Fatalf("history = %+v; want the question, then the answer", msgs)
			}
			evs, err := s.ListEvents(ctx, "r1", 0, 100)
			mustDo(t, "ListEvents", err)
			if len(evs) != 2 || evs[0].Seq != 1 || evs[1].Type != "final" {
				t.Fatalf("events = %+v", evs)
			}
			// No lock comes with it.
			mustDo(t, "AcquireLock(session)", s.AcquireLock(ctx, "session:s1", "r2", time.Hour))
			// Ids taken: nothing more is stored.
			again := *r
			again.SessionID = "s2"
			wantErr(t, "CreateRunWith(ended, run exists)", s.CreateRunWith(ctx, &orchestrator.Session{ID: "s2", UserID: "u1", CreatedAt: at(5)}, &again,
				orchestrator.RunTail{Events: []orchestrator.Event{ev("r1", 3, "progress")}}), orchestrator.ErrConflict)
			wantErr(t, "GetSession(s2)", func() error { _, err := s.GetSession(ctx, "s2"); return err }(), orchestrator.ErrNotFound)
			other := &orchestrator.Run{ID: "r2", SessionID: "s1", UserID: "u1", State: orchestrator.RunFinished, Owner: "o", CreatedAt: at(5)}
			wantErr(t, "CreateRunWith(ended, session exists)", s.CreateRunWith(ctx, &orchestrator.Session{ID: "s1", UserID: "u1", CreatedAt: at(5)}, other,
				orchestrator.RunTail{Events: []orchestrator.Event{ev("r2", 1, "final")}}), orchestrator.ErrConflict)
			wantErr(t, "GetRun(r2)", func() error { _, err := s.GetRun(ctx, "r2"); return err }(), orchestrator.ErrNotFound)
			if evs, _ := s.ListEvents(ctx, "r1", 0, 100); len(evs) != 2 {
				t.Fatalf("refused writes changed the events: %+v", evs)
			}
		},
		"EndRunTail": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			r := runningWithLock(t, s)
			const ttl = time.Hour
			ev := func(seq int64, typ string) orchestrator.Event {
				return orchestrator.Event{RunID: "r1", SessionID: "s1", Seq: seq, Type: typ, Data: []byte(`{"n":1}`), Time: at(time.Duration(seq))}
			}
			mustDo(t, "AppendEvents(1, 2)", s.AppendEvents(ctx, []orchestrator.Event{ev(1, "progress"), ev(2, "llm_output")}))
			answer := orchestrator.Message{Role: orchestrator.RoleAssistant, Content: "the answer", RunID: "r1", CreatedAt: at(3)}
			done := *r
			done.State, done.Answer, done.LastSeq = orchestrator.RunFinished, "the answer", 4
			tail := orchestrator.RunTail{Messages: []orchestrator.Message{answer}, Events: []orchestrator.Event{ev(3, "llm_output"), ev(4, "final")}}

			// stored reads back what EndRun writes.
			stored := func() (*orchestrator.Run, []orchestrator.Message, []orchestrator.Event) {
				t.Helper()
				got, err := s.GetRun(ctx, "r1")
				mustDo(t, "GetRun", err)
				msgs, err := s.ListMessages(ctx, "s1", 0)
				mustDo(t, "ListMessages", err)
				evs, err := s.ListEvents(ctx, "r1", 0, 100)
				mustDo(t, "ListEvents", err)
				return got, msgs, evs
			}
			// unchanged checks that a refused end wrote nothing of its tail either.
			unchanged := func(what string) {
				t.Helper()
				got, msgs, evs := stored()
				if got.State != orchestrator.RunRunning || len(msgs) != 0 || len(evs) != 2 {
					t.Fatalf("after %s: run %s, %d messages, %d events; want running, none, 2", what, got.State, len(msgs), len(evs))
				}
				wantErr(t, "AcquireLock(session, still held)", s.AcquireLock(ctx, "session:s1", "r2", ttl), orchestrator.ErrBusy)
			}
			late := done
			late.Owner = "b"
			wantErr(t, "EndRun(tail, not the owner)", s.EndRun(ctx, &late, at(5), []string{"session:s1"}, tail), orchestrator.ErrConflict)
			unchanged("a fenced end")
			clash := orchestrator.RunTail{Messages: tail.Messages, Events: []orchestrator.Event{ev(2, "llm_output"), ev(4, "final")}}
			wantErr(t, "EndRun(tail repeats a seq)", s.EndRun(ctx, &done, at(5), []string{"session:s1"}, clash), orchestrator.ErrConflict)
			unchanged("an end whose events clash")
			wantErr(t, "EndRun(tail, bad event)", s.EndRun(ctx, &done, at(5), nil, orchestrator.RunTail{Events: []orchestrator.Event{{RunID: "r1"}}}), orchestrator.ErrInvalidArgument)
			unchanged("an end with an invalid event")

			mustDo(t, "EndRun(tail)", s.EndRun(ctx, &done, at(5), []string{"session:s1"}, tail))
			got, msgs, evs := stored()
			if got.State != orchestrator.RunFinished || got.LastSeq != 4 || len(msgs) != 1 || msgs[0].Content != "the answer" || msgs[0].RunID != "r1" {
				t.Fatalf("after EndRun(tail): run %+v, messages %+v", got, msgs)
			}
			if len(evs) != 4 || evs[2].Seq != 3 || evs[3].Seq != 4 || evs[3].Type != "final" {
				t.Fatalf("after EndRun(tail): events %+v; want seqs 1-4, the final last", evs)
			}
			mustDo(t, "AcquireLock(session, freed)", s.AcquireLock(ctx, "session:s1", "r2", ttl))
		},
	}
}

// runningWithLock stores session s1 of u1 with run r1 running (owner "a")
// holding the session's lock for an hour.
func runningWithLock(t *testing.T, s orchestrator.Store) *orchestrator.Run {
	t.Helper()
	createSession(t, s, "s1", "u1", at(0))
	r := &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunRunning, Owner: "a", CreatedAt: at(0)}
	mustDo(t, "CreateRun", s.CreateRun(t.Context(), r))
	mustDo(t, "AcquireLock(session)", s.AcquireLock(t.Context(), "session:s1", "r1", time.Hour))
	return r
}
