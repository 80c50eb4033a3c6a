package memorytest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
)

// RunStoreTests runs the contract every [memory.Store]
// passes. newStore returns a fresh, empty store on every call and
// registers its own cleanup.
//
// Beyond the interface's comments the suite pins: one record per session
// (a new one replaces it), the oldest records dropped beyond the maximum,
// a user never reaching another's records through any method, the queue
// bound with its failed task, and each task claimed by exactly one of
// concurrent claimants.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) memory.Store) {
	t.Helper()
	tests := map[string]func(t *testing.T, s memory.Store){
		"Switch":         testMemorySwitch,
		"Records":        testMemoryRecords,
		"RecordsMax":     testMemoryRecordsMax,
		"RecordsApart":   testMemoryRecordsApart,
		"Queue":          testMemoryQueue,
		"QueueBound":     testMemoryQueueBound,
		"Lease":          testMemoryLease,
		"ClaimOnce":      testMemoryClaimOnce,
		"TaskListFilter": testMemoryTaskList,
		"DeleteUserData": testMemoryDeleteUserData,
	}
	for name, fn := range tests {
		t.Run("Memory/"+name, func(t *testing.T) {
			t.Parallel()
			fn(t, newStore(t))
		})
	}
}

var memT0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func testMemorySwitch(t *testing.T, s memory.Store) {
	ctx := t.Context()
	on, err := s.MemoryEnabled(ctx, "alice")
	mustDo(t, "MemoryEnabled", err)
	if on {
		t.Errorf("MemoryEnabled(alice) before any switch = true, want false")
	}
	mustDo(t, "SetMemoryEnabled", s.SetMemoryEnabled(ctx, "alice", true, memT0))
	mustDo(t, "SetMemoryEnabled", s.SetMemoryEnabled(ctx, "bob", true, memT0))
	mustDo(t, "SetMemoryEnabled", s.SetMemoryEnabled(ctx, "bob", false, memT0.Add(time.Second)))
	for user, want := range map[string]bool{"alice": true, "bob": false, "carol": false} {
		got, err := s.MemoryEnabled(ctx, user)
		mustDo(t, "MemoryEnabled", err)
		if got != want {
			t.Errorf("MemoryEnabled(%s) = %v, want %v", user, got, want)
		}
	}
	putRecord(t, s, "carol", "s1", "c", memT0)
	users, err := s.ListMemoryUsers(ctx)
	mustDo(t, "ListMemoryUsers", err)
	at := memT0
	diff(t, "ListMemoryUsers", []memory.User{
		{UserID: "alice", Enabled: true}, {UserID: "bob"}, {UserID: "carol", Records: 1, LastUpdated: &at},
	}, users)
}

func putRecord(t *testing.T, s memory.Store, user, session, summary string, at time.Time) memory.Record {
	t.Helper()
	r := memory.Record{ID: fmt.Sprintf("mem_%s_%s_%d", user, session, at.UnixNano()), UserID: user, SessionID: session,
		Summary: summary, CreatedAt: at, UpdatedAt: at}
	mustDo(t, "PutMemoryRecord", s.PutMemoryRecord(t.Context(), &r, 30))
	return r
}

func recordSummaries(t *testing.T, s memory.Store, user string) []string {
	t.Helper()
	recs, err := s.ListMemoryRecords(t.Context(), user)
	mustDo(t, "ListMemoryRecords", err)
	out := []string{}
	for _, r := range recs {
		if r.UserID != user {
			t.Errorf("ListMemoryRecords(%s) returned a record of %s", user, r.UserID)
		}
		out = append(out, r.Summary)
	}
	return out
}

func testMemoryRecords(t *testing.T, s memory.Store) {
	ctx := t.Context()
	diff(t, "records of a user without any", []string{}, recordSummaries(t, s, "alice"))
	first := putRecord(t, s, "alice", "s1", "one", memT0)
	putRecord(t, s, "alice", "s2", "two", memT0.Add(time.Minute))
	diff(t, "records, newest first", []string{"two", "one"}, recordSummaries(t, s, "alice"))

	// A second summary of s1 replaces the first and is now the newest.
	putRecord(t, s, "alice", "s1", "one again", memT0.Add(2*time.Minute))
	diff(t, "after re-summarising s1", []string{"one again", "two"}, recordSummaries(t, s, "alice"))
	recs, err := s.ListMemoryRecords(ctx, "alice")
	mustDo(t, "ListMemoryRecords", err)
	if recs[0].ID == first.ID || !recs[0].CreatedAt.Equal(memT0.Add(2*time.Minute)) || recs[0].SessionID != "s1" {
		t.Errorf("replaced record = %+v; want a new record of s1 created at %v", recs[0], memT0.Add(2*time.Minute))
	}

	mustDo(t, "UpdateMemoryRecord", s.UpdateMemoryRecord(ctx, "alice", "s2", "two edited", memT0.Add(3*time.Minute)))
	diff(t, "after an edit", []string{"one again", "two edited"}, recordSummaries(t, s, "alice"))
	wantErr(t, "UpdateMemoryRecord of a missing session", s.UpdateMemoryRecord(ctx, "alice", "s9", "x", memT0), orchestrator.ErrNotFound)

	n, err := s.DeleteMemoryRecords(ctx, "alice", "s1")
	mustDo(t, "DeleteMemoryRecords(s1)", err)
	if n != 1 {
		t.Errorf("DeleteMemoryRecords(alice, s1) = %d, want 1", n)
	}
	n, err = s.DeleteMemoryRecords(ctx, "alice", "s1")
	mustDo(t, "DeleteMemoryRecords(s1) again", err)
	if n != 0 {
		t.Errorf("DeleteMemoryRecords(alice, s1) again = %d, want 0", n)
	}
	putRecord(t, s, "alice", "s3", "three", memT0.Add(4*time.Minute))
	n, err = s.DeleteMemoryRecords(ctx, "alice", "")
	mustDo(t, "DeleteMemoryRecords(all)", err)
	if n != 2 {
		t.Errorf("DeleteMemoryRecords(alice, all) = %d, want 2", n)
	}
	diff(t, "after deleting all", []string{}, recordSummaries(t, s, "alice"))
}

func testMemoryRecordsMax(t *testing.T, s memory.Store) {
	for i := range 31 {
		putRecord(t, s, "alice", fmt.Sprintf("s%02d", i), fmt.Sprintf("r%02d", i), memT0.Add(time.Duration(i)*time.Minute))
	}
	got := recordSummaries(t, s, "alice")
	if len(got) != 30 || got[0] != "r30" || got[29] != "r01" {
		t.Errorf("after 31 records with a maximum of 30: %d records, newest %q, oldest %q; want 30, r30, r01 (r00 dropped)",
			len(got), first(got), last(got))
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func testMemoryRecordsApart(t *testing.T, s memory.Store) {
	ctx := t.Context()
	putRecord(t, s, "alice", "s1", "alice's", memT0)
	putRecord(t, s, "bob", "s1", "bob's", memT0) // the same session id, another user
	// Bob's edits and deletes never reach Alice's record.
	mustDo(t, "UpdateMemoryRecord(bob)", s.UpdateMemoryRecord(ctx, "bob", "s1", "bob edited", memT0))
	wantErr(t, "UpdateMemoryRecord(bob, alice's session)", s.UpdateMemoryRecord(ctx, "bob", "s2", "x", memT0), orchestrator.ErrNotFound)
	if _, err := s.DeleteMemoryRecords(ctx, "bob", ""); err != nil {
		t.Fatal(err)
	}
	diff(t, "alice's records", []string{"alice's"}, recordSummaries(t, s, "alice"))
	diff(t, "bob's records", []string{}, recordSummaries(t, s, "bob"))
	// Alice at the maximum drops only her own.
	for i := range 30 {
		putRecord(t, s, "carol", fmt.Sprintf("c%d", i), "c", memT0.Add(time.Duration(i+1)*time.Second))
	}
	diff(t, "alice's records after carol's 30", []string{"alice's"}, recordSummaries(t, s, "alice"))
}

func task(id, user, session string, at time.Time) *memory.Task {
	return &memory.Task{ID: id, UserID: user, SessionID: session, RunID: "run_" + id, Language: "en",
		State: memory.Queued, QueuedAt: at}
}

func testMemoryQueue(t *testing.T, s memory.Store) {
	ctx := t.Context()
	mustDo(t, "Enqueue t1", s.EnqueueMemoryTask(ctx, task("t1", "alice", "s1", memT0), 10))
	mustDo(t, "Enqueue t2", s.EnqueueMemoryTask(ctx, task("t2", "bob", "s2", memT0.Add(time.Second)), 10))
	// A second task of a queued session is the first one.
	dup := task("t3", "alice", "s1", memT0.Add(2*time.Second))
	mustDo(t, "Enqueue t3", s.EnqueueMemoryTask(ctx, dup, 10))
	if dup.ID != "t1" {
		t.Errorf("a task of a session already queued got id %q, want t1 (no new task)", dup.ID)
	}
	got, err := s.ClaimMemoryTask(ctx, "w1", memT0.Add(time.Minute), time.Minute)
	mustDo(t, "Claim", err)
	if got == nil || got.ID != "t1" || got.State != memory.Running || got.Owner != "w1" || got.Attempts != 1 || got.StartedAt == nil {
		t.Fatalf("first claim = %+v; want t1 running under w1, attempt 1, started", got)
	}
	// Now t1 runs, a new task of s1 is queued again.
	again := task("t4", "alice", "s1", memT0.Add(3*time.Second))
	mustDo(t, "Enqueue t4", s.EnqueueMemoryTask(ctx, again, 10))
	if again.ID != "t4" {
		t.Errorf("a task of a running session got id %q, want t4", again.ID)
	}
	// The fence: only the owner ends a task.
	end := *got
	end.Owner, end.State, end.Error = "w2", memory.Failed, "x"
	wantErr(t, "EndMemoryTask by another owner", s.EndMemoryTask(ctx, &end), orchestrator.ErrConflict)
	fin := memT0.Add(2 * time.Minute)
	got.State, got.Model, got.FinishedAt = memory.Done, "gpt", &fin
	mustDo(t, "EndMemoryTask", s.EndMemoryTask(ctx, got))
	wantErr(t, "EndMemoryTask twice", s.EndMemoryTask(ctx, got), orchestrator.ErrConflict)
	stored, err := s.GetMemoryTask(ctx, "t1")
	mustDo(t, "GetMemoryTask", err)
	if stored.State != memory.Done || stored.Model != "gpt" || stored.FinishedAt == nil || !stored.FinishedAt.Equal(fin) {
		t.Errorf("ended task = %+v; want done by gpt at %v", stored, fin)
	}
	// Release puts a task back in the queue.
	t2, err := s.ClaimMemoryTask(ctx, "w1", memT0.Add(time.Minute), time.Minute)
	mustDo(t, "Claim t2", err)
	if t2 == nil || t2.ID != "t2" {
		t.Fatalf("second claim = %+v, want t2", t2)
	}
	wantErr(t, "ReleaseMemoryTask by another owner", s.ReleaseMemoryTask(ctx, "t2", "w2"), orchestrator.ErrNotFound)
	mustDo(t, "ReleaseMemoryTask", s.ReleaseMemoryTask(ctx, "t2", "w1"))
	t2, err = s.ClaimMemoryTask(ctx, "w2", memT0.Add(time.Minute), time.Minute)
	mustDo(t, "Claim t2 again", err)
	if t2 == nil || t2.ID != "t2" || t2.Owner != "w2" || t2.Attempts != 2 {
		t.Fatalf("claim after release = %+v, want t2 under w2, attempt 2", t2)
	}
	_, err = s.GetMemoryTask(ctx, "nope")
	wantErr(t, "GetMemoryTask(missing)", err, orchestrator.ErrNotFound)
}

func testMemoryQueueBound(t *testing.T, s memory.Store) {
	ctx := t.Context()
	mustDo(t, "Enqueue t1", s.EnqueueMemoryTask(ctx, task("t1", "alice", "s1", memT0), 2))
	mustDo(t, "Enqueue t2", s.EnqueueMemoryTask(ctx, task("t2", "alice", "s2", memT0), 2))
	wantErr(t, "Enqueue beyond the bound", s.EnqueueMemoryTask(ctx, task("t3", "alice", "s3", memT0), 2), orchestrator.ErrBusy)
	t3, err := s.GetMemoryTask(ctx, "t3")
	mustDo(t, "GetMemoryTask(t3)", err)
	if t3.State != memory.Failed || t3.Error == "" {
		t.Errorf("refused task = %+v; want it logged failed with an error", t3)
	}
}

func testMemoryLease(t *testing.T, s memory.Store) {
	ctx := t.Context()
	mustDo(t, "Enqueue", s.EnqueueMemoryTask(ctx, task("t1", "alice", "s1", memT0), 10))
	got, err := s.ClaimMemoryTask(ctx, "w1", memT0, time.Minute)
	mustDo(t, "Claim", err)
	if got == nil {
		t.Fatal("nothing claimed")
	}
	none, err := s.ClaimMemoryTask(ctx, "w2", memT0.Add(30*time.Second), time.Minute)
	mustDo(t, "Claim within the lease", err)
	if none != nil {
		t.Fatalf("claim within the lease = %+v, want nothing", none)
	}
	// The lease ends: another worker takes the task over, and the first
	// one can no longer end it.
	over, err := s.ClaimMemoryTask(ctx, "w2", memT0.Add(2*time.Minute), time.Minute)
	mustDo(t, "Claim after the lease", err)
	if over == nil || over.ID != "t1" || over.Owner != "w2" {
		t.Fatalf("claim after the lease = %+v, want t1 under w2", over)
	}
	got.State = memory.Done
	wantErr(t, "EndMemoryTask by the old owner", s.EndMemoryTask(ctx, got), orchestrator.ErrConflict)
}

func testMemoryClaimOnce(t *testing.T, s memory.Store) {
	ctx := t.Context()
	const tasks, claimants = 20, 6
	for i := range tasks {
		mustDo(t, "Enqueue", s.EnqueueMemoryTask(ctx, task(fmt.Sprintf("t%02d", i), "alice", fmt.Sprintf("s%02d", i), memT0.Add(time.Duration(i)*time.Millisecond)), 100))
	}
	var mu sync.Mutex
	claimed := map[string]string{}
	var wg sync.WaitGroup
	for c := range claimants {
		wg.Go(func() {
			owner := fmt.Sprintf("w%d", c)
			for {
				got, err := s.ClaimMemoryTask(ctx, owner, memT0.Add(time.Minute), time.Hour)
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if got == nil {
					return
				}
				mu.Lock()
				if prev, ok := claimed[got.ID]; ok {
					t.Errorf("task %s claimed by %s and %s", got.ID, prev, owner)
				}
				claimed[got.ID] = owner
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(claimed) != tasks {
		t.Errorf("%d tasks claimed, want %d", len(claimed), tasks)
	}
}

func testMemoryTaskList(t *testing.T, s memory.Store) {
	ctx := t.Context()
	mustDo(t, "Enqueue", s.EnqueueMemoryTask(ctx, task("t1", "alice", "s1", memT0), 10))
	mustDo(t, "Enqueue", s.EnqueueMemoryTask(ctx, task("t2", "bob", "s2", memT0.Add(time.Second)), 10))
	mustDo(t, "Enqueue", s.EnqueueMemoryTask(ctx, task("t3", "alice", "s3", memT0.Add(2*time.Second)), 10))
	if _, err := s.ClaimMemoryTask(ctx, "w", memT0.Add(time.Minute), time.Minute); err != nil {
		t.Fatal(err)
	}
	ids := func(f memory.TaskFilter) []string {
		list, err := s.ListMemoryTasks(ctx, f)
		mustDo(t, "ListMemoryTasks", err)
		out := []string{}
		for _, x := range list {
			out = append(out, x.ID)
		}
		return out
	}
	diff(t, "all tasks, newest first", []string{"t3", "t2", "t1"}, ids(memory.TaskFilter{}))
	diff(t, "alice's tasks", []string{"t3", "t1"}, ids(memory.TaskFilter{UserID: "alice"}))
	diff(t, "running tasks", []string{"t1"}, ids(memory.TaskFilter{States: []memory.TaskState{memory.Running}}))
	diff(t, "limit 1", []string{"t3"}, ids(memory.TaskFilter{Limit: 1}))
}

// A store that keeps the user's other data too (storage.Store, an
// orchestrator.Store) forgets a user's memory (records, tasks, switch)
// with the rest of the user's data, and only that user's.
func testMemoryDeleteUserData(t *testing.T, s memory.Store) {
	del, ok := s.(interface {
		DeleteUserData(ctx context.Context, userID string) error
	})
	if !ok {
		t.Skip("the store keeps no other user data (no DeleteUserData)")
	}
	ctx := t.Context()
	for _, u := range []string{"alice", "bob"} {
		mustDo(t, "SetMemoryEnabled", s.SetMemoryEnabled(ctx, u, true, memT0))
		putRecord(t, s, u, "s1", u+"'s summary", memT0)
		mustDo(t, "Enqueue", s.EnqueueMemoryTask(ctx, task("t_"+u, u, "s1", memT0), 10))
	}
	mustDo(t, "DeleteUserData(alice)", del.DeleteUserData(ctx, "alice"))
	for u, want := range map[string]int{"alice": 0, "bob": 1} {
		on, err := s.MemoryEnabled(ctx, u)
		mustDo(t, "MemoryEnabled", err)
		recs, err := s.ListMemoryRecords(ctx, u)
		mustDo(t, "ListMemoryRecords", err)
		tasks, err := s.ListMemoryTasks(ctx, memory.TaskFilter{UserID: u})
		mustDo(t, "ListMemoryTasks", err)
		if on != (want == 1) || len(recs) != want || len(tasks) != want {
			t.Errorf("%s after deleting alice's data: enabled %v, %d records, %d tasks; want %d of each", u, on, len(recs), len(tasks), want)
		}
	}
}
