package orchestratortest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/orchestrator"
)

// TextSeeds are the hostile strings every store is fed: NUL, control
// characters, invalid UTF-8, text that looks like escapes or SQL, and a
// string of a few megabytes. Fuzzers of stores start from them.
func TextSeeds() []string {
	return []string{
		"", "plain", "#say hi\x00there", "\x00", "\x00\x00\x00", "r\x00",
		"\x01\x02\x07\b\t\n\v\f\r\x1b\x7f", "\u0085\u2028\u2029\ufeff", "\xff", "a\xc3", "\xe2\x82", "\xed\xa0\x80",
		"\xc0\xaf", "\xf4\x90\x80\x80", "ok\xffok\x00ok", "\ufffd", "\\u0000", `{"a":"\u0000"}`, "\\x00\\\\",
		`'`, `''`, `"`, "';DROP TABLE runs;--", `\'`, "$1 ? ?? %s %!v", "E'\\\\'", "用户 ⏰ 🤖",
		strings.Repeat("x\x00\xff", 1<<20/3), strings.Repeat("é", 1<<20),
	}
}

// keyLen bounds the part of a fuzzed string that goes into ids, user ids
// and names: those columns are indexed, and index entries are bounded
// (PostgreSQL's b-tree takes about 2.7 kB).
const keyLen = 200

var textSerial atomic.Int64

// CheckStoredText writes text into every field s keeps (as ids, user ids
// and names cut to 200 bytes, whole everywhere else), reads everything back
// and checks that each value equals [orchestrator.StoredText] (JSON:
// [orchestrator.StoredJSON]) of what was written, and that looking up ids
// made of text is an ordinary miss. No call may fail. s may be shared by
// many calls, in parallel: every call makes its own objects.
func CheckStoredText(t *testing.T, s orchestrator.Store, text string) {
	t.Helper()
	ctx := t.Context()
	key := text
	if len(key) > keyLen {
		key = key[:keyLen]
	}
	n := strconv.FormatInt(textSerial.Add(1), 10) + "-"
	id := func(kind string) string { return kind + n + key }
	st, sj := orchestrator.StoredText, orchestrator.StoredJSON
	created := at(time.Duration(textSerial.Load()) * time.Millisecond)

	sess := &orchestrator.Session{ID: id("s"), UserID: id("u"), Title: text, CreatedAt: created, UpdatedAt: created}
	mustDo(t, "CreateSession", s.CreateSession(ctx, sess))
	wantSess := &orchestrator.Session{ID: st(sess.ID), UserID: st(sess.UserID), Title: st(text), CreatedAt: us(created), UpdatedAt: us(created)}
	got, err := s.GetSession(ctx, sess.ID)
	mustDo(t, "GetSession", err)
	textDiff(t, "GetSession", wantSess, got)
	mustDo(t, "TouchSession", s.TouchSession(ctx, sess.ID, text+"!", created))
	wantSess.Title = st(text + "!")
	list, err := s.ListSessions(ctx, sess.UserID, orchestrator.Page{})
	mustDo(t, "ListSessions", err)
	textDiff(t, "ListSessions", []*orchestrator.Session{wantSess}, list)

	msgs := []orchestrator.Message{
		{Role: "assistant", Content: text, ReasoningContent: text, RunID: id("r"), CreatedAt: created,
			ToolCalls: []orchestrator.ToolCall{{ID: id("c"), Name: id("t"), Arguments: json.RawMessage(text)}}},
		{Role: "tool", Content: text, ToolCallID: id("c"), Name: id("t"), RunID: id("r"), CreatedAt: created},
	}
	mustDo(t, "AppendMessages", s.AppendMessages(ctx, sess.ID, msgs))
	want := cloneMessages(msgs)
	for i := range want {
		m := &want[i]
		m.Content, m.ReasoningContent, m.RunID, m.CreatedAt = st(m.Content), st(m.ReasoningContent), st(m.RunID), us(created)
		m.ToolCallID, m.Name = st(m.ToolCallID), st(m.Name)
		for j, c := range m.ToolCalls {
			m.ToolCalls[j] = orchestrator.ToolCall{ID: st(c.ID), Name: st(c.Name), Arguments: sj(c.Arguments)}
		}
	}
	history, err := s.ListMessages(ctx, sess.ID, 0)
	mustDo(t, "ListMessages", err)
	textDiff(t, "ListMessages", want, history)

	run := &orchestrator.Run{ID: id("r"), SessionID: sess.ID, UserID: sess.UserID, State: orchestrator.RunRunning,
		Question: text, ModelName: id("m"), CreatedAt: created}
	mustDo(t, "CreateRun", s.CreateRun(ctx, run))
	upd := *run
	upd.State, upd.StopReason, upd.Answer, upd.Error, upd.LastSeq = orchestrator.RunFinished, orchestrator.StopModelResponse, text, text+"?", 2
	mustDo(t, "UpdateRun", s.UpdateRun(ctx, &upd))
	wantRun := &orchestrator.Run{ID: st(run.ID), SessionID: st(sess.ID), UserID: st(sess.UserID), State: orchestrator.RunFinished,
		StopReason: orchestrator.StopModelResponse, Question: st(text), Answer: st(text), Error: st(text + "?"),
		ModelName: st(run.ModelName), LastSeq: 2, CreatedAt: us(created)}
	gotRun, err := s.GetRun(ctx, run.ID)
	mustDo(t, "GetRun", err)
	textDiff(t, "GetRun", wantRun, gotRun)
	runs, err := s.ListRuns(ctx, orchestrator.RunFilter{UserID: sess.UserID, SessionID: sess.ID})
	mustDo(t, "ListRuns", err)
	textDiff(t, "ListRuns", []*orchestrator.Run{wantRun}, runs)

	asJSON, _ := json.Marshal(map[string]string{"text": text}) // valid JSON: NUL escaped, bad bytes U+FFFD
	evs := []orchestrator.Event{
		{RunID: run.ID, SessionID: sess.ID, Seq: 1, Type: id("e"), Data: asJSON, Time: created},
		{RunID: run.ID, SessionID: sess.ID, Seq: 2, Type: "raw", Data: json.RawMessage(text), Time: created},
	}
	mustDo(t, "AppendEvents", s.AppendEvents(ctx, evs))
	wantEvs := make([]orchestrator.Event, len(evs))
	for i, e := range evs {
		wantEvs[i] = orchestrator.Event{RunID: st(e.RunID), SessionID: st(e.SessionID), Seq: e.Seq, Type: st(e.Type), Data: sj(e.Data), Time: us(created)}
	}
	gotEvs, err := s.ListEvents(ctx, run.ID, 0, 0)
	mustDo(t, "ListEvents", err)
	textDiff(t, "ListEvents", wantEvs, gotEvs)

	mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, &orchestrator.ToolLog{RunID: run.ID, SessionID: sess.ID, UserID: sess.UserID,
		CallID: id("c"), Tool: id("t"), Arguments: json.RawMessage(text), Result: text, IsError: true}))
	mustDo(t, "AcquireLock", s.AcquireLock(ctx, id("lock"), id("owner"), time.Minute))
	mustDo(t, "RenewLock", s.RenewLock(ctx, id("lock"), id("owner"), time.Minute))
	mustDo(t, "ReleaseLock", s.ReleaseLock(ctx, id("lock"), id("owner")))

	// Ids nobody created are misses, whatever bytes they hold.
	_, err = s.GetRun(ctx, id("missing"))
	wantErr(t, "GetRun(missing)", err, orchestrator.ErrNotFound)
	_, err = s.GetSession(ctx, id("missing"))
	wantErr(t, "GetSession(missing)", err, orchestrator.ErrNotFound)
	wantErr(t, "UpdateRun(missing)", s.UpdateRun(ctx, &orchestrator.Run{ID: id("missing")}), orchestrator.ErrNotFound)
	wantErr(t, "TouchSession(missing)", s.TouchSession(ctx, id("missing"), text, created), orchestrator.ErrNotFound)
	wantLen(t, "ListMessages(missing)", 0, size(s.ListMessages(ctx, id("missing"), 0)))
	wantLen(t, "ListEvents(missing)", 0, size(s.ListEvents(ctx, id("missing"), 0, 0)))
	wantLen(t, "ListSessions(missing)", 0, size(s.ListSessions(ctx, id("missing"), orchestrator.Page{})))
	wantLen(t, "ListRuns(missing)", 0, size(s.ListRuns(ctx, orchestrator.RunFilter{UserID: id("missing")})))

	mustDo(t, "DeleteSession", s.DeleteSession(ctx, sess.ID))
	_, err = s.GetRun(ctx, run.ID)
	wantErr(t, "GetRun(after DeleteSession)", err, orchestrator.ErrNotFound)
}

// rawEqual compares JSON as bytes (cmp walks a []byte element by element,
// which takes seconds for the megabyte seeds).
var rawEqual = gocmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })

func textDiff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := gocmp.Diff(want, got, rawEqual); d != "" {
		if len(d) > 4000 {
			d = d[:4000] + "..."
		}
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// textTests runs CheckStoredText on every seed, all on one store.
func (st *storeSuite) textTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"Seeds": func(t *testing.T) {
			s := st.open(t)
			for i, text := range TextSeeds() {
				t.Run(strconv.Itoa(i), func(t *testing.T) { CheckStoredText(t, s, text) })
			}
		},
	}
}
