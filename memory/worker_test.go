package memory_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/memory/memorytest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// workers is memory with its workers over in-memory stores: the memory
// store, the core's store its sessions are read from, and a scripted
// summariser.
type workers struct {
	m        *memory.Memory
	st       memory.Store
	sessions orchestrator.Store
	model    *orchestratortest.ScriptedModel
}

// workersConfig sets up newWorkers; zero fields are fresh stores, a model
// named "summariser" and a 10ms poll.
type workersConfig struct {
	st       memory.Store
	sessions orchestrator.Store
	settings orchestrator.ModelSettings
	noModel  bool
	opts     memory.Options
}

func newWorkers(t *testing.T, c workersConfig, turns ...orchestratortest.Turn) *workers {
	t.Helper()
	if c.st == nil {
		c.st = memorytest.NewMemStore()
	}
	if c.sessions == nil {
		c.sessions = orchestratortest.NewMemStore()
	}
	if c.settings.Name == "" {
		c.settings.Name = "summariser"
	}
	w := &workers{st: c.st, sessions: c.sessions, model: orchestratortest.NewScriptedModel(turns...)}
	c.opts.Enabled = true
	if c.opts.PollInterval == 0 {
		c.opts.PollInterval = 10 * time.Millisecond
	}
	models := orchestratortest.Models{Model: w.model, Settings: c.settings}
	if c.noModel {
		models = orchestratortest.Models{}
	}
	w.m = memory.New(c.st, c.sessions, models, &c.opts)
	t.Cleanup(w.m.Close)
	return w
}

// session stores a session of user with messages.
func (w *workers) session(t *testing.T, id, user string, msgs ...orchestrator.Message) {
	t.Helper()
	now := time.Now()
	if err := w.sessions.CreateSession(t.Context(), &orchestrator.Session{ID: id, UserID: user, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if len(msgs) > 0 {
		if err := w.sessions.AppendMessages(t.Context(), id, msgs); err != nil {
			t.Fatal(err)
		}
	}
}

// finish tells memory a run of user in session finished, with memory on
// for the user, and waits for the task's end.
func (w *workers) finish(t *testing.T, user, session string) memory.Task {
	t.Helper()
	if err := w.m.SetEnabled(t.Context(), user, true); err != nil {
		t.Fatal(err)
	}
	w.m.RunFinished(t.Context(), orchestrator.FinishedRun{ID: orchestrator.NewID("run_"), SessionID: session, UserID: user, Language: "en"})
	return w.ended(t, user, session)
}

// ended polls the task log until the session's newest task has ended.
func (w *workers) ended(t *testing.T, user, session string) memory.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tasks, err := w.m.Tasks(t.Context(), memory.TaskFilter{UserID: user})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range tasks {
			if x.SessionID == session && (x.State == memory.Done || x.State == memory.Failed) {
				return x
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task of %s's session %s did not end: %+v", user, session, tasks)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func chat(q, a string) []orchestrator.Message {
	return []orchestrator.Message{{Role: orchestrator.RoleUser, Content: q}, {Role: orchestrator.RoleAssistant, Content: a}}
}

// A summary is the model's answer without its reasoning, stamped, stored
// as the user's record of the session; the task names the model.
func TestWorkerStoresTheSummary(t *testing.T) {
	w := newWorkers(t, workersConfig{}, orchestratortest.Turn{Content: "<think>let me see</think>The user likes tea."})
	w.session(t, "sess_1", "alice", chat("I like tea", "Noted.")...)
	task := w.finish(t, "alice", "sess_1")
	if task.State != memory.Done || task.Model != "summariser" || task.Attempts != 1 || task.Language != "en" {
		t.Fatalf("task = %+v", task)
	}
	got, err := w.m.Task(t.Context(), task.ID)
	if err != nil || got.ID != task.ID || got.State != memory.Done {
		t.Errorf("Task(%s) = %+v, %v", task.ID, got, err)
	}
	recs, err := w.m.Records(t.Context(), "alice")
	if err != nil || len(recs) != 1 {
		t.Fatalf("records = %+v, %v", recs, err)
	}
	if s := recs[0].Summary; !strings.HasPrefix(s, "[20") || !strings.HasSuffix(s, "] The user likes tea.") {
		t.Errorf("summary = %q; want the stamped answer without its reasoning", s)
	}
	reqs := w.model.Requests()
	if len(reqs) != 1 || reqs[0].Messages[0].Role != orchestrator.RoleSystem ||
		!strings.Contains(reqs[0].Messages[1].Content, "user: I like tea") || !strings.Contains(reqs[0].Messages[1].Content, "assistant: Noted.") {
		t.Errorf("summary request = %+v", reqs)
	}
}

// A task ends failed, saying why, and stores no record when the summary
// cannot be made: above all when the task names a session of another user
// (memory never summarises one user's session into another's memory).
func TestWorkerFailures(t *testing.T) {
	cases := []struct {
		name    string
		turn    orchestratortest.Turn
		setup   func(t *testing.T, w *workers) (user, session string)
		why     string
		noModel bool
	}{
		{
			name: "another user's session",
			turn: orchestratortest.Turn{Content: "leak"},
			setup: func(t *testing.T, w *workers) (string, string) {
				w.session(t, "sess_alice", "alice", chat("alice's secret", "ok")...)
				return "bob", "sess_alice"
			},
			why: "not found", noModel: true,
		},
		{
			name:  "no such session",
			turn:  orchestratortest.Turn{Content: "x"},
			setup: func(t *testing.T, w *workers) (string, string) { return "bob", "sess_gone" },
			why:   "not found", noModel: true,
		},
		{
			name: "nothing to remember",
			turn: orchestratortest.Turn{Content: "x"},
			setup: func(t *testing.T, w *workers) (string, string) {
				w.session(t, "sess_empty", "bob", orchestrator.Message{Role: orchestrator.RoleUser, Content: "   "})
				return "bob", "sess_empty"
			},
			why: "nothing to remember", noModel: true,
		},
		{
			name: "the model fails",
			turn: orchestratortest.Turn{Err: errors.New("rate limited")},
			setup: func(t *testing.T, w *workers) (string, string) {
				w.session(t, "sess_1", "bob", chat("hi", "hello")...)
				return "bob", "sess_1"
			},
			why: "rate limited",
		},
		{
			name: "the model answers nothing",
			turn: orchestratortest.Turn{Content: "<think>hmm</think>  "},
			setup: func(t *testing.T, w *workers) (string, string) {
				w.session(t, "sess_1", "bob", chat("hi", "hello")...)
				return "bob", "sess_1"
			},
			why: "answered with nothing",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorkers(t, workersConfig{}, c.turn)
			user, session := c.setup(t, w)
			task := w.finish(t, user, session)
			if task.State != memory.Failed || !strings.Contains(task.Error, c.why) {
				t.Fatalf("task = %+v; want failed saying %q", task, c.why)
			}
			if recs, _ := w.m.Records(t.Context(), user); len(recs) != 0 {
				t.Errorf("records after a failed summary = %+v", recs)
			}
			if n := len(w.model.Requests()); c.noModel && n != 0 {
				t.Errorf("the model was asked %d times", n)
			}
		})
	}
}

// No model configured: the task fails naming the lookup's error.
func TestWorkerWithoutAModel(t *testing.T) {
	w := newWorkers(t, workersConfig{noModel: true})
	w.session(t, "sess_1", "u", chat("hi", "hello")...)
	if task := w.finish(t, "u", "sess_1"); task.State != memory.Failed || !strings.Contains(task.Error, "no model") {
		t.Fatalf("task = %+v; want failed for want of a model", task)
	}
}

// The queue is bounded: past QueueSize queued tasks, a session's task is
// stored failed ("queue full") rather than dropped silently; a second run
// of a session already queued joins its task.
func TestWorkerQueueIsBounded(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	w := newWorkers(t, workersConfig{opts: memory.Options{QueueSize: 1}}, orchestratortest.Turn{Content: "s", Wait: gate, Started: started}, orchestratortest.Turn{Content: "s"})
	ctx := t.Context()
	for _, s := range []string{"sess_1", "sess_2", "sess_3"} {
		w.session(t, s, "u", chat("q "+s, "a")...)
	}
	if err := w.m.SetEnabled(ctx, "u", true); err != nil {
		t.Fatal(err)
	}
	run := func(s string) {
		w.m.RunFinished(ctx, orchestrator.FinishedRun{ID: orchestrator.NewID("run_"), SessionID: s, UserID: "u"})
	}
	run("sess_1")
	<-started // the worker holds sess_1's task, running
	run("sess_2")
	run("sess_2") // joins the queued task
	run("sess_3") // the queue (1) is full
	tasks, err := w.m.Tasks(ctx, memory.TaskFilter{UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string][]memory.TaskState{}
	for _, x := range tasks {
		states[x.SessionID] = append(states[x.SessionID], x.State)
	}
	if got := states["sess_2"]; len(got) != 1 || got[0] != memory.Queued {
		t.Errorf("sess_2's tasks = %v; want one, queued", got)
	}
	if got := states["sess_3"]; len(got) != 1 || got[0] != memory.Failed {
		t.Errorf("sess_3's tasks = %v; want one, failed", got)
	}
	queued, err := w.m.Tasks(ctx, memory.TaskFilter{UserID: "u", States: []memory.TaskState{memory.Queued}})
	if err != nil || len(queued) != 1 || queued[0].SessionID != "sess_2" {
		t.Errorf("queued tasks = %+v, %v; want sess_2's", queued, err)
	}
	close(gate)
	if task := w.ended(t, "u", "sess_2"); task.State != memory.Done {
		t.Errorf("sess_2's task = %+v; want done once the worker is free", task)
	}
}

// A worker stopped in the middle of a summary puts its task back in the
// queue, and the next start (another process, or this one restarted)
// summarises it; a task that keeps failing its workers is given up after
// three claims.
func TestWorkerStopReleasesItsTask(t *testing.T) {
	st := memorytest.NewMemStore()
	hang := make(chan struct{})
	defer close(hang)
	started := make(chan struct{})
	first := newWorkers(t, workersConfig{st: st}, orchestratortest.Turn{Content: "never", Wait: hang, Started: started})
	first.session(t, "sess_1", "u", chat("hi", "hello")...)
	if err := first.m.SetEnabled(t.Context(), "u", true); err != nil {
		t.Fatal(err)
	}
	first.m.RunFinished(t.Context(), orchestrator.FinishedRun{ID: "run_1", SessionID: "sess_1", UserID: "u"})
	<-started
	first.m.Close()
	tasks, err := st.ListMemoryTasks(t.Context(), memory.TaskFilter{UserID: "u"})
	if err != nil || len(tasks) != 1 || tasks[0].State != memory.Queued || tasks[0].Attempts != 1 {
		t.Fatalf("tasks after Close = %+v, %v; want one, back in the queue after one attempt", tasks, err)
	}

	next := newWorkers(t, workersConfig{st: st, sessions: first.sessions}, orchestratortest.Turn{Content: "remembered"})
	if task := next.ended(t, "u", "sess_1"); task.State != memory.Done || task.Attempts != 2 {
		t.Fatalf("task after the restart = %+v; want done on its second attempt", task)
	}
	if recs, _ := next.m.Records(t.Context(), "u"); len(recs) != 1 || !strings.HasSuffix(recs[0].Summary, "remembered") {
		t.Errorf("records = %+v", recs)
	}
}

// A task claimed more than three times (its workers died) is given up
// without asking the model again.
func TestWorkerGivesUpAfterThreeAttempts(t *testing.T) {
	st := memorytest.NewMemStore()
	ctx := t.Context()
	task := &memory.Task{ID: orchestrator.NewID("mem_task_"), UserID: "u", SessionID: "sess_1", State: memory.Queued, QueuedAt: time.Now()}
	if err := st.EnqueueMemoryTask(ctx, task, 10); err != nil {
		t.Fatal(err)
	}
	// Three workers claimed it and died: their leases have ended.
	for i := range 3 {
		at := time.Now().Add(time.Duration(i-3) * time.Hour)
		if got, err := st.ClaimMemoryTask(ctx, "dead-worker", at, time.Minute); err != nil || got == nil {
			t.Fatalf("claim = %+v, %v", got, err)
		}
	}
	w := newWorkers(t, workersConfig{st: st}, orchestratortest.Turn{Content: "summary"})
	w.session(t, "sess_1", "u", chat("hi", "hello")...)
	got := w.ended(t, "u", "sess_1")
	if got.State != memory.Failed || !strings.Contains(got.Error, "given up after 3 attempts") || got.Attempts != 4 {
		t.Fatalf("task = %+v; want given up on its fourth claim", got)
	}
	if n := len(w.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times for a task given up", n)
	}
}

// The summary reads the newest history that fits the model's window and
// keeps it in order; what does not fit is the oldest.
func TestWorkerKeepsTheNewestHistoryThatFits(t *testing.T) {
	// A window of 1,300 tokens leaves the conversation the floor of
	// 1,000 tokens: about 4,000 bytes of ASCII.
	w := newWorkers(t, workersConfig{settings: orchestrator.ModelSettings{Name: "small", MaxContext: 1300}}, orchestratortest.Turn{Content: "ok"})
	var msgs []orchestrator.Message
	for i := range 20 {
		msgs = append(msgs, chat("question "+string(rune('a'+i))+" "+strings.Repeat("x", 400), "answer")...)
	}
	w.session(t, "sess_long", "u", msgs...)
	if task := w.finish(t, "u", "sess_long"); task.State != memory.Done {
		t.Fatalf("task = %+v", task)
	}
	text := w.model.Requests()[0].Messages[1].Content
	if !strings.Contains(text, "question t ") || strings.Contains(text, "question a ") {
		t.Errorf("the summary's input keeps the oldest question or drops the newest (%d bytes)", len(text))
	}
	if i, j := strings.Index(text, "question s "), strings.Index(text, "question t "); i < 0 || i > j {
		t.Errorf("the kept history is not in order")
	}
	if n := orchestrator.EstimateTextTokens(text); n > 1100 {
		t.Errorf("the summary's input is %d tokens; the window leaves about 1000", n)
	}
}
