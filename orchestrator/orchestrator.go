package orchestrator

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options are the orchestrator's knobs. The zero value of each field means
// the default stated on it; [Options.withDefaults] is the one source of
// those defaults.
type Options struct {
	// MaxActiveRuns bounds the runs executing at once. Default 32.
	MaxActiveRuns int
	// QueueSize bounds the FIFO of runs waiting for a slot. Default 128;
	// negative means no queue (a run that cannot start is refused).
	QueueSize int
	// QueueRetryAfter is the hint returned with a full queue. Default 5s.
	QueueRetryAfter time.Duration
	// PerUser bounds the running (and queued) runs of one user for callers
	// that are people (/wunder). Default 1.
	PerUser int
	// PerUserAgents bounds them for callers that are agents (A2A, MCP,
	// Connect). Default: MaxActiveRuns.
	PerUserAgents int
	// ClusterMaxRuns bounds the runs in flight (queued, running or
	// waiting) across every replica sharing the store: each holds one of
	// as many cluster slots, store locks taken at Start beside the user's
	// slot and freed at its end (locks.go). Beyond it Start answers
	// ErrUnavailable (cluster_full) with the QueueRetryAfter hint. 0, the
	// default, is no such limit: MaxActiveRuns and the queue bound each
	// process alone.
	ClusterMaxRuns int
	// IdempotencyTTL is how long a RunRequest.IdempotencyKey names its
	// run. Default 24h.
	IdempotencyTTL time.Duration
	// LockTTL is the lease of the store-backed locks; they are renewed every
	// LockTTL/3 while the run lives. Default 15s.
	LockTTL time.Duration
	// OneProcess says that no other process takes runs or locks from the
	// store (a SQLite database whose data directory the server holds). A
	// person's blocking run on a new session may then hold its user slot
	// in this process alone until its start is stored, so a short one is
	// stored in one write, as an agent's is (claims.go). Never set it for
	// a store that replicas share: their runs would not meet such a slot.
	OneProcess bool
	// MaxHistoryItems bounds the session history given to the model.
	// Default 200.
	MaxHistoryItems int
	// DefaultLanguage of prompts: "en" or "zh". Default "en".
	DefaultLanguage string
	// Workspace summarises a user's workspace for the prompt; nil = none.
	Workspace Workspace
	// Events shapes the event log.
	Events EventPolicy
	// FollowInterval is how often a subscriber polls the store for a run
	// that executes in another process. Default 250ms. With a Watcher it
	// is only the safety net for a lost notification: max(FollowInterval,
	// LockTTL/3).
	FollowInterval time.Duration
	// Replan configures replanning and the goal check (plan.go); off by
	// default.
	Replan ReplanPolicy
	// Approvals says which calls wait for a person's decision
	// (approval.go); by default none.
	Approvals ApprovalPolicy
	// Questions says how long ask_user's questions wait and what happens
	// when nobody answers (question.go).
	Questions QuestionPolicy
	// Schemas validates the arguments of an edited approval against the
	// tool's input schema; nil checks only required properties.
	Schemas SchemaValidator
	// Watcher, when set, tells this process at once when another one
	// appends events to a run or asks to cancel one (a store shared by
	// replicas; see [RunWatcher]). nil: followers poll and remote cancels
	// wait for the heartbeat.
	Watcher RunWatcher
	// ToolLogDelay is how long a tool log may wait to be stored, so that
	// the logs of many calls share one write (toollog.go). Readers of the
	// logs (ToolUsage, DeleteSession, DeleteUserData) have those waiting
	// stored first. Default 50ms; NoDelay: each is stored as soon as the
	// last write of logs is done.
	ToolLogDelay Delay
	// StoreRetry bounds how long a failing store write of a run (its
	// events, history, state) is retried before the run is given up as
	// failed; a PostgreSQL restart within it loses nothing. Default 10s.
	StoreRetry time.Duration
	// ResumeInterrupted resumes a run whose instance died, on the instance
	// that finds it, from its last stored round, instead of ending it
	// failed with stop reason "interrupted". Default false here; wunder's
	// configuration turns it on (concurrency.resume_interrupted: true).
	ResumeInterrupted bool
	// InstanceID names this instance, the owner of the runs it executes.
	// Default: host, pid, process start time and a random part (see
	// instance.go); set it only in tests.
	InstanceID string
	// Memory is per-user long-term memory (memory.go; package memory
	// implements it); nil = none.
	Memory Memory
	// Compaction configures how an over-long conversation is compacted
	// (compaction.go).
	Compaction CompactionOptions
	// Tokens counts the prompt tokens of model requests; nil = an
	// [EstimateCounter] calibrated by the usage models report.
	Tokens TokenCounter
	// Observer, when set, is told of runs, model calls and tool calls
	// (telemetry; see [Observer]). nil: nothing is observed, at no cost.
	Observer Observer
	// Logger; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxActiveRuns <= 0 {
		o.MaxActiveRuns = 32
	}
	if o.QueueSize == 0 {
		o.QueueSize = 128
	}
	if o.QueueSize < 0 {
		o.QueueSize = 0
	}
	if o.QueueRetryAfter <= 0 {
		o.QueueRetryAfter = 5 * time.Second
	}
	if o.PerUser <= 0 {
		o.PerUser = 1
	}
	if o.PerUserAgents <= 0 {
		o.PerUserAgents = o.MaxActiveRuns
	}
	if o.LockTTL <= 0 {
		o.LockTTL = 15 * time.Second
	}
	if o.IdempotencyTTL <= 0 {
		o.IdempotencyTTL = 24 * time.Hour
	}
	if o.MaxHistoryItems <= 0 {
		o.MaxHistoryItems = 200
	}
	if o.DefaultLanguage == "" {
		o.DefaultLanguage = "en"
	}
	if o.FollowInterval <= 0 {
		o.FollowInterval = 250 * time.Millisecond
	}
	o.ToolLogDelay = o.ToolLogDelay.withDefault(50 * time.Millisecond)
	if o.StoreRetry <= 0 {
		o.StoreRetry = 10 * time.Second
	}
	o.Events.BlockingDelay = o.Events.BlockingDelay.withDefault(20 * time.Millisecond)
	o.Events.StreamDelay = o.Events.StreamDelay.withDefault(5 * time.Millisecond)
	if o.InstanceID == "" {
		o.InstanceID = newInstanceID()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Approvals = o.Approvals.withDefaults()
	o.Questions = o.Questions.withDefaults()
	o.Compaction = o.Compaction.withDefaults()
	if o.Tokens == nil {
		o.Tokens = NewEstimateCounter()
	}
	return o
}

// Orchestrator runs agent tasks. It is safe for concurrent use.
//
// Goroutines: each admitted run executes in one goroutine started by the
// orchestrator (not by the request that submitted it, so a client that goes
// away never stops a run), plus a lock heartbeat and an event-log flusher per
// run. All of them are tracked by wg and end before Close returns.
type Orchestrator struct {
	store  Store
	models Models
	tools  *Registry
	opts   Options
	// lang is the default language, Options.DefaultLanguage until
	// SetDefaultLanguage changes it.
	lang    atomic.Pointer[string]
	log     *slog.Logger
	prompts *promptBuilder

	baseCtx context.Context // parent of every run's context
	stopAll context.CancelFunc
	wg      sync.WaitGroup

	instance   string    // Options.InstanceID
	toolLogs   *toolLogs // writes tool logs in batches (toollog.go)
	reaperStop chan struct{}
	reaperWG   sync.WaitGroup

	// watching says the store notifies run changes (watch.go); follow
	// wakes the followers of runs executing elsewhere.
	watching bool
	follow   watchers

	// leaseMu guards leased: whether the instance's lease was taken.
	leaseMu sync.Mutex
	leased  bool

	// mu guards the admission state below.
	mu     sync.Mutex
	live   map[string]*liveRun // every queued or running run of this process
	active int                 // runs holding an execution slot
	queue  []*liveRun          // FIFO of admitted runs waiting for a slot
	closed bool
	// storing holds the runs Start is storing, not yet admitted: executed
	// here as far as the reaper is concerned.
	storing map[string]bool
	// claims holds, with Options.OneProcess, the lock keys held in this
	// process alone, by owner (claims.go).
	claims map[string]string
}

// New returns an orchestrator. store, models and tools are required.
func New(store Store, models Models, tools *Registry, opts *Options) *Orchestrator {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	orch := &Orchestrator{
		store: store, models: models, tools: tools, opts: o, log: o.Logger,
		prompts: newPromptBuilder(256),
		baseCtx: ctx, stopAll: cancel,
		instance: o.InstanceID, reaperStop: make(chan struct{}),
		live: map[string]*liveRun{}, storing: map[string]bool{}, claims: map[string]string{},
		toolLogs: newToolLogs(store, o.Logger, o.ToolLogDelay.Or(0)),
	}
	orch.lang.Store(&o.DefaultLanguage)
	orch.startReaper()
	orch.startWatcher()
	return orch
}

// SetDefaultLanguage changes the language of runs that name none, from the
// next run on ("en" or "zh"; the admin API's i18n.default_language).
func (o *Orchestrator) SetDefaultLanguage(lang string) {
	if lang == "" {
		lang = "en"
	}
	o.lang.Store(&lang)
}

func (o *Orchestrator) defaultLanguage() string { return *o.lang.Load() }

// Caller says who submits a run; it selects the per-user limit.
type Caller int

const (
	// CallerUser is a person behind /wunder: Options.PerUser applies.
	CallerUser Caller = iota
	// CallerAgent is an agent (A2A, MCP, Connect): Options.PerUserAgents.
	CallerAgent
)

// RunRequest asks for one run.
type RunRequest struct {
	UserID string
	// SessionID continues a session; empty starts a new one.
	SessionID string
	// CreateSession starts the session SessionID when there is none of
	// that id: a front-end that derives the id from a name its client
	// chose (A2A's contextId) continues or starts it alike. A session of
	// that id of another user is still not found.
	CreateSession bool
	Question      string
	// ToolNames selects tools (canonical, alias or wire names); always-on
	// tools are added.
	ToolNames []string
	// ExcludeTools are never offered (e.g. wunder@run to the run it starts).
	ExcludeTools []string
	// OfferedTools are what the front-end's configuration offers every run
	// it starts (a2a.server.tool_names): at the start, the ones the policy
	// lets the user use join ToolNames (and the stored spec), the others
	// are left out, not an error (a user denied one of them still runs).
	OfferedTools []string
	// PreloadSkills are skills loaded from the run's first model call on
	// (toolsets that are [PromptContributor]s read them).
	PreloadSkills []string
	ModelName     string
	// ToolCallMode overrides the model's: tool_call or function_call.
	ToolCallMode string
	// Language of the prompt: en or zh; empty = the default.
	Language string
	Caller   Caller
	// Frontend names the front-end that started the run (one of the
	// Frontend* constants; "" from Go), for telemetry.
	Frontend string
	// MaxRounds overrides the model's when > 0.
	MaxRounds int
	// Temperature, when set, overrides the model's (0 to 2).
	Temperature *float64
	// MaxOutput overrides the model's output tokens per call when > 0.
	MaxOutput int
	// SkipToolCalls: the run offers no tools and takes the model's first
	// answer as final, ignoring any tool call in it.
	SkipToolCalls bool
	// Delivery is how the caller reads the run: followed (the zero
	// value), streamed, blocking or as a task. It decides whether the
	// model's answer streams and when the run's start and events are
	// stored.
	Delivery Delivery
	// IdempotencyKey, when set, makes a retried Start return the run the
	// first one started (idempotency.go).
	IdempotencyKey string
	// Metadata travels with the run to its tools (ToolInvocation.Metadata);
	// the A2A front-end puts the delegation depth here for the recursion
	// guard of a2a@service tools.
	Metadata map[string]string
	// ApprovalMode: suggest, auto_edit or full_auto; "" = the policy's
	// (see ApprovalPolicy).
	ApprovalMode string
	// Attachments go with the question: converted by the front-end (text
	// and Markdown; images as data URLs), stored with the question's
	// message.
	Attachments []Attachment
}

// Delivery is how a run's caller reads it. Each front-end says it once,
// where it starts the run; the core derives from it what the three
// questions below need, so no front-end combines flags its own way:
//   - does the model's answer stream (llm_output_delta events), or come
//     whole (Delivery.WholeAnswer)?
//   - may the caller learn the run's ids before any event is stored, or
//     only with its events (Delivery.IDsWithEvents: then a run on a new
//     session defers its start to its log's first write, and a run that
//     ends at once is stored in one write)?
//   - does the caller read only the end (Delivery.Blocking: its events may
//     wait up to EventPolicy.BlockingDelay to ride in fewer writes)?
type Delivery int

// Deliveries, with the front-ends that use them.
const (
	// DeliverFollowed: the caller has the run's ids at once and follows
	// its events (POST /wunder/runs, wunder@run with a progress token,
	// Go callers): the answer streams as it grows.
	DeliverFollowed Delivery = iota
	// DeliverStreamed: the caller streams the run's events and hands out
	// its ids only with them (POST /wunder's stream, Connect's Run).
	DeliverStreamed
	// DeliverBlocking: the caller waits for the end and reads nothing
	// before it (POST /wunder without stream, wunder@run without a
	// progress token, a blocking A2A send): the answer comes whole.
	DeliverBlocking
	// DeliverTask: an A2A task the caller follows from its ids (a
	// non-blocking send, or one with a push config): status updates as
	// they come, the answer whole as one artifact at the end.
	DeliverTask
	// DeliverTaskStreamed: an A2A task streamed to its caller
	// (SendStreamingMessage): as DeliverTask, with the ids only in the
	// stream's events.
	DeliverTaskStreamed
)

// Blocking reports whether the caller reads only the run's end.
func (d Delivery) Blocking() bool { return d == DeliverBlocking }

// WholeAnswer reports whether the caller takes the answer only whole,
// at the end: the run's model calls are then not streamed (unless the
// model's StreamAlways says so) and it emits no llm_output_delta events.
func (d Delivery) WholeAnswer() bool {
	return d == DeliverBlocking || d == DeliverTask || d == DeliverTaskStreamed
}

// IDsWithEvents reports whether the caller hands out the run's and its
// session's ids only with the run's events, so nobody can refer to the
// run before one of its events is stored.
func (d Delivery) IDsWithEvents() bool { return d == DeliverStreamed || d == DeliverTaskStreamed }

// String names the delivery.
func (d Delivery) String() string {
	switch d {
	case DeliverFollowed:
		return "followed"
	case DeliverStreamed:
		return "streamed"
	case DeliverBlocking:
		return "blocking"
	case DeliverTask:
		return "task"
	case DeliverTaskStreamed:
		return "task_streamed"
	}
	return "delivery(" + strconv.Itoa(int(d)) + ")"
}

const maxQuestionLen = 1 << 20

// validUserID is [ValidateUserID], the one user id rule.
func validUserID(id string) error { return ValidateUserID(id) }

func (o *Orchestrator) validate(req *RunRequest) error {
	if err := validUserID(req.UserID); err != nil {
		return err
	}
	if req.Delivery < DeliverFollowed || req.Delivery > DeliverTaskStreamed {
		return invalidf("unknown delivery %d", int(req.Delivery))
	}
	if req.SessionID != "" {
		if err := CheckSessionID(req.SessionID); err != nil {
			return err
		}
	}
	// The question is kept as the store keeps it (NUL and invalid UTF-8
	// as U+FFFD), so the model, the live run and the stored run agree.
	req.Question = StoredText(req.Question)
	if strings.TrimSpace(req.Question) == "" {
		return invalidf("question is required")
	}
	if len(req.Question) > maxQuestionLen {
		return invalidf("question is longer than %d bytes", maxQuestionLen)
	}
	switch req.ToolCallMode {
	case "", ModeToolCall, ModeFunctionCall:
	default:
		return invalidf("tool_call_mode must be %q or %q, got %q", ModeToolCall, ModeFunctionCall, req.ToolCallMode)
	}
	switch req.Language {
	case "", "en", "zh":
	default:
		return invalidf("language must be \"en\" or \"zh\", got %q", req.Language)
	}
	if req.MaxRounds < 0 {
		return invalidf("max_rounds must not be negative")
	}
	if t := req.Temperature; t != nil && (*t < 0 || *t > 2 || *t != *t) {
		return invalidf("temperature must be between 0 and 2, got %v", *t)
	}
	if req.MaxOutput < 0 {
		return invalidf("max_output must not be negative")
	}
	if err := checkAttachments(req.Attachments); err != nil {
		return err
	}
	return CheckApprovalMode(req.ApprovalMode)
}

// newID returns a URL-safe id with a prefix: 10 characters of the time in
// milliseconds, then 16 of randomness (80 bits), in a base32 alphabet
// whose ASCII order is its numeric order. The random part keeps ids
// unguessable; the time first makes the ids issued together sort together,
// so the rows a run writes keyed by them (its run and session rows, its
// events, messages and lock) land on the right-hand pages of each index
// instead of a random page each: one page per index for a whole batch of
// runs, in SQLite's WAL and PostgreSQL's alike.
func newID(prefix string) string {
	return prefix + sortableID(time.Now())
}

const sortableAlphabet = "0123456789abcdefghjkmnpqrstvwxyz" // Crockford's, lower case

func sortableID(t time.Time) string {
	var b [26]byte
	ms := uint64(t.UnixMilli())
	for i := 9; i >= 0; i-- {
		b[i] = sortableAlphabet[ms&31]
		ms >>= 5
	}
	var r [10]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	// 80 random bits, five at a time.
	var acc uint64
	bits := 0
	j := 10
	for _, x := range r {
		acc = acc<<8 | uint64(x)
		bits += 8
		for bits >= 5 {
			bits -= 5
			b[j] = sortableAlphabet[(acc>>bits)&31]
			j++
		}
	}
	return string(b[:])
}

// GetRun returns a run the user may see ("" = any user).
func (o *Orchestrator) GetRun(ctx context.Context, userID, runID string) (*Run, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if lr := o.liveRun(runID); lr != nil {
		if !visible(userID, lr.userID) {
			return nil, fmt.Errorf("%w: run %s", ErrNotFound, runID)
		}
		// A live run shows its end only once stored, and leaves the live
		// set a moment after its final event: ended, the store is the
		// truth (its session may be deleted already).
		if r := lr.snapshot(); !r.State.Terminal() {
			return r, nil
		}
	}
	r, err := o.store.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if !visible(userID, r.UserID) {
		return nil, fmt.Errorf("%w: run %s", ErrNotFound, runID)
	}
	return r, nil
}

// ListRuns lists runs, newest first; f.UserID scopes them.
func (o *Orchestrator) ListRuns(ctx context.Context, f RunFilter) ([]*Run, error) {
	runs, err := o.store.ListRuns(ctx, f)
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		if lr := o.liveRun(r.ID); lr != nil {
			runs[i] = lr.snapshot()
		}
	}
	return runs, nil
}

// Tools returns the catalog a user may select from.
func (o *Orchestrator) Tools(ctx context.Context, userID string) ([]ToolSpec, error) {
	if err := validUserID(userID); err != nil {
		return nil, err
	}
	return o.tools.Catalog(ctx, userID)
}

// ToolCatalog returns the user's catalog grouped as GET /wunder/tools
// answers it (see [Registry.GroupedCatalog]).
func (o *Orchestrator) ToolCatalog(ctx context.Context, userID string) (map[string][]CatalogEntry, error) {
	if err := validUserID(userID); err != nil {
		return nil, err
	}
	return o.tools.GroupedCatalog(ctx, userID)
}

// Registry returns the tool registry (front-ends use its wire encoding).
func (o *Orchestrator) Registry() *Registry { return o.tools }

func visible(scope, owner string) bool { return scope == "" || scope == owner }

func (o *Orchestrator) liveRun(id string) *liveRun {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.live[id]
}

// executes reports whether this instance is storing or executing the run.
func (o *Orchestrator) executes(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.live[id] != nil || o.storing[id]
}

// Close stops admitting runs, waits for running ones until ctx is done, then
// cancels what is left and waits for it to wind down. Last, it gives up the
// instance's lease, so replicas take over at once whatever this instance
// could not end.
func (o *Orchestrator) Close(ctx context.Context) error {
	o.mu.Lock()
	wasClosed := o.closed
	o.closed = true
	queued := o.queue
	o.queue = nil
	o.mu.Unlock()
	if !wasClosed {
		close(o.reaperStop)
	}
	for _, lr := range queued {
		o.finishQueued(lr)
	}
	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	o.stopAll()
	<-done
	o.reaperWG.Wait()
	// After the runs: a tool round writes tool logs.
	o.toolLogs.stop()
	o.leaseMu.Lock()
	if o.leased {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if rerr := o.store.ReleaseLock(rctx, instanceKey(o.instance), o.instance); rerr != nil {
			o.log.Warn("instance lease not released; it expires with its ttl", "err", rerr)
		}
		cancel()
		o.leased = false
	}
	o.leaseMu.Unlock()
	return err
}
