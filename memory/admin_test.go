package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/memory/memorytest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// adminMemory is memory on over in-memory stores, with no workers' work
// to do (nothing queues a task unless a test does).
func adminMemory(t *testing.T) (*memory.Memory, memory.Store) {
	t.Helper()
	st := memorytest.NewMemStore()
	m := memory.New(st, orchestratortest.NewMemStore(), orchestratortest.Models{}, &memory.Options{Enabled: true, PollInterval: time.Hour})
	t.Cleanup(m.Close)
	return m, st
}

func putRecord(t *testing.T, st memory.Store, user, session, summary string) {
	t.Helper()
	now := time.Now()
	if err := st.PutMemoryRecord(t.Context(), &memory.Record{ID: orchestrator.NewID("mem_"), UserID: user, SessionID: session,
		Summary: summary, CreatedAt: now, UpdatedAt: now}, 30); err != nil {
		t.Fatal(err)
	}
}

// Memory that is off, or on without a store to keep it, answers every
// management call ErrUnavailable, and the core's calls do nothing.
func TestMemoryOffAnswersUnavailable(t *testing.T) {
	for name, m := range map[string]*memory.Memory{
		"off":                 memory.New(memorytest.NewMemStore(), orchestratortest.NewMemStore(), orchestratortest.Models{}, nil),
		"on without store":    memory.New(nil, orchestratortest.NewMemStore(), orchestratortest.Models{}, &memory.Options{Enabled: true}),
		"off by zero options": memory.New(nil, nil, orchestratortest.Models{}, &memory.Options{}),
	} {
		t.Run(name, func(t *testing.T) {
			defer m.Close()
			ctx := t.Context()
			calls := map[string]error{}
			_, calls["Enabled"] = m.Enabled(ctx, "u")
			calls["SetEnabled"] = m.SetEnabled(ctx, "u", true)
			_, calls["Users"] = m.Users(ctx)
			_, calls["Records"] = m.Records(ctx, "u")
			calls["UpdateRecord"] = m.UpdateRecord(ctx, "u", "sess_1", "x")
			_, calls["DeleteRecords"] = m.DeleteRecords(ctx, "u", "")
			_, calls["Tasks"] = m.Tasks(ctx, memory.TaskFilter{})
			_, calls["Task"] = m.Task(ctx, "mem_task_1")
			for call, err := range calls {
				if !errors.Is(err, orchestrator.ErrUnavailable) {
					t.Errorf("%s = %v; want ErrUnavailable", call, err)
				}
			}
			if block, off := m.PromptBlock(ctx, "u", "en"); block != "" || off {
				t.Errorf("PromptBlock = %q, %v; want nothing", block, off)
			}
			m.RunFinished(ctx, orchestrator.FinishedRun{ID: "run_1", SessionID: "sess_1", UserID: "u"}) // must not panic
			m.ForgetUser("u")
		})
	}
}

// Every management call checks its ids before the store sees them.
func TestMemoryAdminRefusesBadInput(t *testing.T) {
	m, _ := adminMemory(t)
	ctx := t.Context()
	second := func(_ any, err error) error { return err }
	cases := []struct {
		name      string
		err, want error
	}{
		{"Enabled without a user", second(m.Enabled(ctx, "")), orchestrator.ErrInvalidArgument},
		{"SetEnabled of a/b", m.SetEnabled(ctx, "a/b", true), orchestrator.ErrInvalidArgument},
		{"Records of ..", second(m.Records(ctx, "..")), orchestrator.ErrInvalidArgument},
		{"UpdateRecord without a session", m.UpdateRecord(ctx, "u", "", "x"), orchestrator.ErrInvalidArgument},
		{"UpdateRecord of a bad session id", m.UpdateRecord(ctx, "u", "sess/1", "x"), orchestrator.ErrNotFound},
		{"UpdateRecord with an empty summary", m.UpdateRecord(ctx, "u", "sess_1", " \n\t "), orchestrator.ErrInvalidArgument},
		{"UpdateRecord with an oversized summary", m.UpdateRecord(ctx, "u", "sess_1", strings.Repeat("x", 64<<10+1)), orchestrator.ErrInvalidArgument},
		{"UpdateRecord of a bad user", m.UpdateRecord(ctx, "a\x00", "sess_1", "x"), orchestrator.ErrInvalidArgument},
		{"UpdateRecord of no record", m.UpdateRecord(ctx, "u", "sess_1", "x"), orchestrator.ErrNotFound},
		{"DeleteRecords without a user", second(m.DeleteRecords(ctx, "", "sess_1")), orchestrator.ErrInvalidArgument},
		{"DeleteRecords of a bad session id", second(m.DeleteRecords(ctx, "u", "sess 1")), orchestrator.ErrNotFound},
		{"Tasks of a bad user", second(m.Tasks(ctx, memory.TaskFilter{UserID: "a\\b"})), orchestrator.ErrInvalidArgument},
		{"Task without an id", second(m.Task(ctx, "")), orchestrator.ErrInvalidArgument},
		{"Task of a bad id", second(m.Task(ctx, "mem task")), orchestrator.ErrNotFound},
		{"Task unknown", second(m.Task(ctx, "mem_task_unknown")), orchestrator.ErrNotFound},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s = %v; want %v", c.name, c.err, c.want)
		}
	}
}

// A user's records are theirs: another user can neither read, edit nor
// delete them, and deleting all of one's own leaves the others'.
func TestMemoryRecordsStayWithTheirUser(t *testing.T) {
	m, st := adminMemory(t)
	ctx := t.Context()
	putRecord(t, st, "alice", "sess_a1", "alice likes tea")
	putRecord(t, st, "alice", "sess_a2", "alice writes Go")
	putRecord(t, st, "bob", "sess_b1", "bob likes coffee")

	if err := m.UpdateRecord(ctx, "bob", "sess_a1", "bob was here"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("bob's edit of alice's record = %v; want ErrNotFound", err)
	}
	if _, err := m.DeleteRecords(ctx, "bob", "sess_a1"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("bob's deletion of alice's record = %v; want ErrNotFound", err)
	}
	if n, err := m.DeleteRecords(ctx, "bob", ""); err != nil || n != 1 {
		t.Errorf("bob's deletion of all his records = %d, %v; want 1", n, err)
	}
	recs, err := m.Records(ctx, "alice")
	if err != nil || len(recs) != 2 {
		t.Fatalf("alice's records after bob's attempts = %+v, %v", recs, err)
	}
	for _, r := range recs {
		if r.UserID != "alice" || strings.Contains(r.Summary, "bob") {
			t.Errorf("alice's record = %+v", r)
		}
	}
	// Her own edit is stored as stores keep text, trimmed.
	if err := m.UpdateRecord(ctx, "alice", "sess_a1", "  alice likes green tea\x00 "); err != nil {
		t.Fatal(err)
	}
	recs, _ = m.Records(ctx, "alice")
	var edited string
	for _, r := range recs {
		if r.SessionID == "sess_a1" {
			edited = r.Summary
		}
	}
	if edited != "alice likes green tea\uFFFD" {
		t.Errorf("edited summary = %q", edited)
	}
	if n, err := m.DeleteRecords(ctx, "alice", "sess_a2"); err != nil || n != 1 {
		t.Errorf("alice's deletion of one record = %d, %v", n, err)
	}
	if _, err := m.DeleteRecords(ctx, "alice", "sess_a2"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("deleting it again = %v; want ErrNotFound", err)
	}
}

// The switch: off until set, per user, and the users' list shows who has
// a switch or records, with their counts.
func TestMemorySwitchAndUsers(t *testing.T) {
	m, st := adminMemory(t)
	ctx := t.Context()
	if on, err := m.Enabled(ctx, "alice"); err != nil || on {
		t.Fatalf("a new user's switch = %v, %v; want off", on, err)
	}
	if err := m.SetEnabled(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	if on, _ := m.Enabled(ctx, "alice"); !on {
		t.Error("alice's switch is not on after SetEnabled")
	}
	if on, _ := m.Enabled(ctx, "bob"); on {
		t.Error("alice's switch turned bob's on")
	}
	putRecord(t, st, "carol", "sess_c1", "carol's")
	users, err := m.Users(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]memory.User{}
	for _, u := range users {
		got[u.UserID] = u
	}
	if a := got["alice"]; !a.Enabled || a.Records != 0 || a.LastUpdated != nil {
		t.Errorf("alice = %+v; want on, no records", a)
	}
	if c := got["carol"]; c.Enabled || c.Records != 1 || c.LastUpdated == nil {
		t.Errorf("carol = %+v; want off, one record", c)
	}
	if _, ok := got["bob"]; ok || len(users) != 2 {
		t.Errorf("users = %+v; want alice and carol", users)
	}
	// Turning it off keeps the records but takes them out of prompts.
	if err := m.SetEnabled(ctx, "carol", false); err != nil {
		t.Fatal(err)
	}
	if block, off := m.PromptBlock(ctx, "carol", "en"); block != "" || !off {
		t.Errorf("carol's block with memory off = %q, off %v", block, off)
	}
	if recs, _ := m.Records(ctx, "carol"); len(recs) != 1 {
		t.Errorf("carol's records after turning memory off = %d; want kept", len(recs))
	}
	if err := m.SetEnabled(ctx, "carol", true); err != nil {
		t.Fatal(err)
	}
	if block, off := m.PromptBlock(ctx, "carol", "zh"); off || !strings.Contains(block, "carol's") || !strings.Contains(block, "以下是") {
		t.Errorf("carol's zh block = %q, off %v", block, off)
	}
}

// failingSwitches is a store whose switches and records cannot be read.
type failingSwitches struct {
	memory.Store
	switchErr, recordsErr error
}

func (s failingSwitches) MemoryEnabled(ctx context.Context, u string) (bool, error) {
	if s.switchErr != nil {
		return false, s.switchErr
	}
	return s.Store.MemoryEnabled(ctx, u)
}

func (s failingSwitches) ListMemoryRecords(ctx context.Context, u string) ([]memory.Record, error) {
	if s.recordsErr != nil {
		return nil, s.recordsErr
	}
	return s.Store.ListMemoryRecords(ctx, u)
}

// A store that fails leaves memory out of the prompt without calling the
// switch off: the run's end asks again.
func TestPromptBlockWhenTheStoreFails(t *testing.T) {
	base := memorytest.NewMemStore()
	ctx := t.Context()
	if err := base.SetMemoryEnabled(ctx, "u", true, time.Now()); err != nil {
		t.Fatal(err)
	}
	putRecord(t, base, "u", "sess_1", "remember this")
	for name, st := range map[string]memory.Store{
		"switch unreadable":  failingSwitches{Store: base, switchErr: errors.New("db down")},
		"records unreadable": failingSwitches{Store: base, recordsErr: errors.New("db down")},
	} {
		t.Run(name, func(t *testing.T) {
			m := memory.New(st, orchestratortest.NewMemStore(), orchestratortest.Models{}, &memory.Options{Enabled: true, PollInterval: time.Hour, SwitchTTL: -1})
			defer m.Close()
			if block, off := m.PromptBlock(ctx, "u", "en"); block != "" || off {
				t.Errorf("PromptBlock = %q, off %v; want nothing, not off", block, off)
			}
		})
	}
	m := memory.New(base, orchestratortest.NewMemStore(), orchestratortest.Models{}, &memory.Options{Enabled: true, PollInterval: time.Hour})
	defer m.Close()
	if block, off := m.PromptBlock(ctx, "u", "en"); off || !strings.Contains(block, "remember this") {
		t.Errorf("the control: PromptBlock = %q, off %v", block, off)
	}
}
