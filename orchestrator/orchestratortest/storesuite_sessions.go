package orchestratortest

import (
	"fmt"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

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
			key := func(i int) *orchestrator.PageKey {
				return orchestrator.SessionKey(&orchestrator.Session{ID: fmt.Sprintf("s%d", i), UpdatedAt: at(time.Duration(i) * time.Second)})
			}
			wantSessionIDs(t, s, "u1", orchestrator.Page{Limit: 2}, "s4", "s3")
			wantSessionIDs(t, s, "u1", orchestrator.Page{Limit: 2, After: key(3)}, "s2", "s1")
			wantSessionIDs(t, s, "u1", orchestrator.Page{Limit: 2, After: key(1)}, "s0")
			wantSessionIDs(t, s, "u1", orchestrator.Page{After: key(2)}, "s1", "s0")
			wantSessionIDs(t, s, "u1", orchestrator.Page{After: key(0)})
		},
		"ListAfterKey": func(t *testing.T) {
			// Pages after a key walk the whole list once, through ties in
			// time (told apart by id) and sub-second steps (a backend
			// storing times as text must compare them as it sorts them).
			s, ctx := st.open(t), t.Context()
			base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			steps := map[string]time.Duration{"a": 0, "b": 0, "c": time.Microsecond, "d": 100 * time.Millisecond,
				"e": 120 * time.Millisecond, "f": 120 * time.Millisecond, "g": time.Second}
			for id, d := range steps {
				createSession(t, s, id, "u1", base.Add(d))
			}
			createSession(t, s, "other", "u2", base.Add(time.Millisecond))
			want := []string{"g", "f", "e", "d", "c", "b", "a"}
			wantSessionIDs(t, s, "u1", orchestrator.Page{}, want...)
			for _, size := range []int{1, 2, 3, 7} {
				var got []string
				var after *orchestrator.PageKey
				for range len(want) + 1 {
					list, err := s.ListSessions(ctx, "u1", orchestrator.Page{Limit: size, After: after})
					mustDo(t, "ListSessions(after)", err)
					if len(list) == 0 {
						break
					}
					for _, x := range list {
						got = append(got, x.ID)
					}
					after = orchestrator.SessionKey(list[len(list)-1])
				}
				diff(t, fmt.Sprintf("sessions paged %d at a time after keys", size), want, got)
			}
			// A key survives its cursor.
			first, err := orchestrator.NewPager("cursor", "", 2, "sessions", "u1")
			mustDo(t, "NewPager", err)
			cursor := first.Cursor(orchestrator.SessionKey(&orchestrator.Session{ID: "e", UpdatedAt: base.Add(120 * time.Millisecond)}))
			next, err := orchestrator.NewPager("cursor", cursor, 2, "sessions", "u1")
			mustDo(t, "NewPager(cursor)", err)
			key := next.Page.After
			wantSessionIDs(t, s, "u1", orchestrator.Page{After: key}, "d", "c", "b", "a")
			wantSessionIDs(t, s, "u1", next.Page, "d", "c", "b")
			// A session touched between pages moves ahead of the key: it is
			// not shown again, and nothing after the key is skipped.
			mustDo(t, "TouchSession", s.TouchSession(ctx, "b", "", base.Add(time.Hour)))
			wantSessionIDs(t, s, "u1", orchestrator.Page{After: key}, "d", "c", "a")
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
		"Rename": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createSession(t, s, "s2", "u1", at(time.Minute))
			mustDo(t, "RenameSession", s.RenameSession(ctx, "s1", "Trip to Zürich"))
			got, err := s.GetSession(ctx, "s1")
			mustDo(t, "GetSession", err)
			// The title only: UpdatedAt, and so the listing's order, stay.
			diff(t, "after RenameSession", &orchestrator.Session{ID: "s1", UserID: "u1", Title: "Trip to Zürich", CreatedAt: us(at(0)), UpdatedAt: us(at(0))}, got)
			list, err := s.ListSessions(ctx, "u1", orchestrator.Page{})
			mustDo(t, "ListSessions", err)
			if len(list) != 2 || list[0].ID != "s2" || list[1].Title != "Trip to Zürich" {
				t.Errorf("ListSessions after a rename: %+v; want s2 first, s1 renamed", list)
			}
			wantErr(t, "RenameSession(missing)", s.RenameSession(ctx, "nope", "x"), orchestrator.ErrNotFound)
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
