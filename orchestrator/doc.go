// Package orchestrator is the core of wunder: the agent loop, the run state
// machine, the event log, the session manager (locks, limits, queue), the tool
// registry and its wire naming, the policy point of tool calls, the prompt
// builder, the domain types and the sentinel errors, and the interfaces the
// core consumes ([Model], [Tool], [Toolset], [Store], [Workspace],
// [Memory], [Observer]).
//
// It imports no other wunder package, no net/http, no database driver and no
// protocol SDK: front-ends (gateway, a2a, mcpserver, connectapi) call it, and
// adapters (adapters/*, storage) implement its interfaces. deps_test.go at the
// module root enforces this.
//
// What runs use but the run loop is not lives beside it, in packages that
// import the core and never the reverse: memory (long-term memory: the
// core asks it through [Memory]), monitor (the admin's aggregation of runs
// and tool calls, over [Orchestrator.CurrentTool] and
// [Orchestrator.ToolCallStats]), toolconfig (run-time tool configuration,
// which reaches the core only as toolsets) and accounts (users and tokens;
// the [Principal] made from them stays here, as every layer reads it).
// cmd/wunder wires them.
//
// # Runs
//
//	              Start
//	                │  validate, resolve model and tools, take the session
//	                │  lock and a per-user slot (ErrBusy), then a global slot
//	                ▼  or a queue place (ErrUnavailable + RetryAfter)
//	queued ──────► running ──────► finished | failed
//	  │               │
//	  └── Cancel ─────┴──► cancelling ──► cancelled
//
// [Orchestrator.Start] returns as soon as the run is admitted; the run
// executes on a goroutine of the orchestrator, detached from the request that
// started it, so a client that disconnects never stops a run. Follow it with
// [Orchestrator.Events].
//
// [Orchestrator.CallTool] calls one catalog tool directly, outside any run,
// for front-ends that offer the catalog itself (MCP's aggregated endpoint).
//
// # The event log
//
// Every event of a run gets the next seq (1, 2, 3, ...). While a run
// executes in this process its events are kept in memory and read by index by
// every subscriber, so a slow subscriber never stalls the run and never misses
// an event; a flusher goroutine persists them in batches, and an event becomes
// visible to subscribers only once it is stored (durable before visible: a
// crash never loses an event a client saw). The history a run adds as it
// goes (each tool round, a compaction summary) is handed to the flusher
// too, which stores it before the events of its next batch, so the run
// does not wait for those writes. A run whose caller waits for the end
// (DeliverBlocking) lets its events wait up to
// EventPolicy.BlockingDelay for the next ones, so a short run stores them
// with its end. An agent's blocking run on a new session goes further:
// nobody can know its run or session before its caller is answered, so
// Start does not store it; its start is stored in its log's first write,
// in one write with that write's history and events
// (and is stored before a tool round that changes something or asks a
// person, so the run is on record before it acts and before anything
// refers to it; a round of read-only calls waits for nothing), and a run
// that ends within the delay is stored whole, session, run,
// history and events, in one write (Store.CreateRunWith, the run as it ended). A list of runs
// shows it at most the delay after it starts. A person's run stores its
// start at once: the person's run slot is taken with it, and a slot that
// is held must refuse the run before it runs. With Options.OneProcess (a
// SQLite database this process holds) the slot is claimed in the process
// instead, which every taker of a lock here consults, and a person's
// blocking run is deferred like an agent's (claims.go). A streamed run
// whose caller hands out its ids only with its events
// (Delivery.IDsWithEvents: POST /wunder's, A2A's and Connect's streams) is deferred the same
// way: its first batch waits up to EventPolicy.StreamDelay (5ms), or
// until the run stores its start itself, so a run that ends by then is
// one write; its later batches wait for nothing. Chunks of the model's
// streamed output that come while nobody can see the last one yet (it is
// not stored) join it rather than taking a seq each (runLog.emitDelta), so
// a model that outruns the store costs one event and one row per batch,
// not per chunk; EventPolicy.KeepOutputChunks keeps one per chunk. When the run ends, its
// terminal state, its answer, the events the flusher had not stored yet and
// the final event are stored in one write (after any batch in flight, so
// seqs stay in order), which also frees its locks in the store; then its
// slot is freed, then the final event becomes visible, and the run leaves
// the live table only once its log is persisted. [Orchestrator.Events] therefore replays from any seq
// without gap or duplicate, from memory or from the store.
//
// # Crashes and store failures
//
// Each instance has an id and a lease in the store; each run records its
// owner. A reaper (at start and every LockTTL/3) ends the runs of dead
// instances — a process of this host that is gone at once, any other when
// its lease expires — as failed with stop reason "interrupted", claiming
// them first so the dead owner's late writes are fenced off (recover.go,
// instance.go). Store writes of a run are retried for StoreRetry; a run
// whose events or history cannot be stored ends failed, and no client is
// told it finished.
//
// # Compaction
//
// Before each model call the loop counts the request ([TokenCounter], or
// takes the model's own count from its last answer). Past the model's
// CompactionRatio of MaxContext, or over the safe budget, the request is
// compacted (compaction.go): completed steps' tool results trimmed first
// under pressure, the history before a kept tail summarised by the same
// model (a placeholder when that fails); the summary is stored, and later
// runs of the session start from it. The full history stays in the store
// for people to read.
//
// # Goroutines
//
// Per admitted run: the run's own goroutine (the loop), a lock heartbeat
// (renews the store-backed locks every LockTTL/3 and watches the store for a
// cancellation requested by another process), and the event-log flusher.
// Per round, one goroutine per read-only tool call plus one that runs the
// mutating calls in order. All of them are tracked by the orchestrator's
// WaitGroup (the flusher by its run), recover where they call out, and end
// before [Orchestrator.Close] returns. Per instance, one goroutine writes
// the tool logs of every call in batches, each log waiting up to
// Options.ToolLogDelay for others to join it (toollog.go; Close writes
// what is left, and ToolUsage, DeleteSession and DeleteUserData have those
// waiting written first), and one
// reaper goroutine renews the lease and ends
// orphans, and, with Options.Watcher, one listener of run changes (with a
// short goroutine per remote cancel it acts on); Close stops them and gives
// up the lease.
//
// # Departures from DESIGN.md
//
//   - Followers of a run executing in another process (replicas sharing
//     PostgreSQL) wake on the store's notifications when it has them
//     ([RunWatcher]: LISTEN/NOTIFY) and poll only as the safety net for a
//     lost one (every LockTTL/3); a store without them is polled every
//     Options.FollowInterval (250 ms). A cancellation crosses processes
//     through the run's stored state: the owner acts on the notification at
//     once, and its heartbeat checks again every LockTTL/3.
//   - observability.drop_event_types removes events from the log entirely
//     (neither streamed nor stored) rather than only from storage, so that
//     seqs stay dense and a replay equals the live stream.
package orchestrator
