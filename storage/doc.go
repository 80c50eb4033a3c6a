// Package storage implements [orchestrator.Store] on bun, over SQLite (the
// embedded default, pure Go: modernc.org/sqlite, no CGO) or PostgreSQL (pgx's
// database/sql driver with bun's pgdialect). cmd/wunder is its only
// importer; the core sees just the interface.
//
//	st, err := storage.Open(ctx, storage.Options{SQLitePath: "data/wunder.db", AutoMigrate: true})
//	if err != nil { ... }
//	defer st.Close()
//	orch := orchestrator.New(st, models, registry, opts)
//
// # Schema and migrations
//
// Tables: users, sessions, messages, runs, events (primary key (run_id,
// seq)), tool_logs, session_locks, push_configs, a2a_peer_ids (a2apeers.go;
// expired from their last use) and others. The migrations are SQL
// files embedded from migrations/sqlite and migrations/postgres — the same
// versions, spelled per dialect — applied by bun/migrate, each in a
// transaction. [Store.Migrate] (or Options.AutoMigrate in [Open], and
// `wunder migrate`) applies what is pending; it is idempotent and holds bun's
// migration lock table while it works, so replicas starting together migrate
// once. After the migrations it keys the accounts a migration could not
// (userkeys.go): user ids are unique ignoring case by a unique index on
// their Go case fold. Row models are unexported and converted to the core's types in
// rows.go; JSON (event data, tool arguments, tool calls) is stored as text,
// byte for byte.
//
// # Text
//
// Every string is stored as [orchestrator.StoredText] gives it, the same on
// both backends and in orchestratortest's in-memory store: a NUL byte and
// each byte of an invalid UTF-8 sequence become U+FFFD, all else is kept.
// PostgreSQL's text holds neither NUL nor invalid UTF-8, and bun inlines
// values into the SQL text, where a NUL would end SQLite's statement. The
// rule is applied where bun writes a string into a statement (text.go), so
// it covers values written and values looked up by: GetRun("r\x00") is
// ErrNotFound, not a driver error. JSON is text too: a raw NUL or invalid
// byte in event data or tool arguments becomes U+FFFD, the escape \x00
// is kept as written.
//
// # Referential rules
//
// A message and a run need their session and an event its run (else
// ErrNotFound); tool logs need nothing. DeleteSession removes the session's
// messages, runs, their events and push configs, and its tool logs, in one
// transaction. Unique violations map to ErrConflict on both drivers (SQLite
// extended codes, PostgreSQL SQLSTATE 23505).
//
// # Time
//
// Times are stored with microsecond precision (truncated) and returned in
// UTC: PostgreSQL TIMESTAMPTZ; SQLite text 'YYYY-MM-DD HH:MM:SS.ffffff+00:00',
// whose text order is time order. Zero creation times are set to the process
// clock. Lock expiry uses the database's clock on PostgreSQL (now()), so
// replicas agree whatever their own clocks say, and the process clock on
// SQLite, whose file is local.
//
// # Concurrency
//
// A Store is safe for concurrent use. On PostgreSQL each write is one
// statement or one transaction, and AcquireLock is a single conditional
// upsert (INSERT ... ON CONFLICT ("key") DO UPDATE ... WHERE the row is the
// owner's or expired) whose affected-row count says who won. The writes
// every run makes (its run row, events, messages and session locks) go
// through a batch writer (pgwriter.go): two loops, each on a connection of
// its own, send the statements of whatever writes are waiting in one
// pipeline ending in one Sync, which PostgreSQL runs as one implicit
// transaction: one round trip and one WAL flush for many runs' writes,
// with their notifications delivered at its commit. Its statements bind
// their values and are prepared once per connection and shape (pgstmt.go),
// so the server does not parse and plan each anew; a DSN that sets pgx's
// default_query_exec_mode to anything but cache_statement (as for a
// transaction-mode pooler that does not keep prepared statements) turns
// that off. A statement that
// fails rolls the batch back and each write runs again alone; a lost
// connection is reported to the batch's writers as an unknown outcome,
// never run twice. Other writes use database/sql's pool (pgx in exec
// mode: one round trip a statement).
//
// SQLite allows one writer at a time. Each connection opens with WAL (readers
// never wait for the writer), synchronous=NORMAL (durable at checkpoints,
// never corrupt), foreign_keys on, busy_timeout 10s, and _txlock=immediate,
// so a write transaction takes the write lock at BEGIN and cannot fail later
// upgrading a read lock. Within a process, every write goes through one
// writer goroutine that commits whatever writes are waiting in one
// transaction (group commit, writer.go; a batch with a failed write is
// rolled back and its writes run again alone):
// N runs writing at once cost one commit, each caller still hears only
// what was committed, and nobody polls SQLite's busy handler (which backs
// off up to 100ms per try). busy_timeout remains the arbiter between
// processes sharing the file. The writer keeps a connection of its own, so
// its page cache stays warm (SQLite empties a connection's cache when
// another one wrote); reads use a small pool (Options.MaxOpenConns,
// default 4) beside it. Users' tool rules, read by every run that offers
// tools, are remembered for a second (access_cache.go). No connection checkpoints in its commit
// (wal_autocheckpoint 0): a checkpointer copies the WAL into the database
// file beside the writer, and the writer finishes each checkpoint in its
// turn so the WAL can start over (checkpoint.go); SQLite's own, in the
// commit that crossed 1,000 pages, made every write queued behind it wait
// for two fsyncs.
//
// Several processes may share a SQLite file; Options.Sole asks to be the
// one that holds it (sole.go: an advisory lock on <db>.sole that the
// kernel drops with the process), which lets the orchestrator keep locks
// in memory (orchestrator.Options.OneProcess).
package storage
