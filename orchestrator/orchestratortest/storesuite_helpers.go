package orchestratortest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/storetest"
	"github.com/wunder/wunder/orchestrator"
)

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

// The suites' shared assertions (internal/testutil/storetest).
var (
	mustDo  = storetest.MustDo
	wantErr = storetest.WantErr
	diff    = storetest.Diff
)
