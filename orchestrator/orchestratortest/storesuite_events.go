package orchestratortest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

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
