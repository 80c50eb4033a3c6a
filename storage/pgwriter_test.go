package storage

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wunder/wunder/orchestrator"
)

// holdPG makes every loop of the PostgreSQL writer busy: each takes a
// write whose check blocks until its release channel is closed. It
// returns once all are held.
func holdPG(t *testing.T, s *Store) (releases []chan struct{}, done chan error) {
	t.Helper()
	done = make(chan error, pgWriterLoops)
	for range pgWriterLoops {
		release, taken := make(chan struct{}), make(chan struct{})
		go func() {
			done <- s.pgExec(t.Context(), &pgWrite{stmts: []pgStmt{{sql: "SELECT 1"}}, check: func([]pgconn.CommandTag) error {
				close(taken)
				<-release
				return nil
			}})
		}()
		<-taken
		releases = append(releases, release)
	}
	return releases, done
}

// queuedOn waits until n ops wait for w.
func queuedOn(t *testing.T, w *writer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(w.ops) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d ops queued, want %d", len(w.ops), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A pipelined batch in which one write fails (a seq the log holds): the
// batch's transaction is rolled back, every write runs again alone, and
// each caller hears its own outcome: the others are stored, the failed
// one left nothing, and no write is stored twice.
func TestPGWriterBatchWithAFailure(t *testing.T) {
	s := open(t, freshPostgres(t))
	ctx := t.Context()
	for _, id := range []string{"r1", "r2"} {
		sess := &orchestrator.Session{ID: "s-" + id, UserID: "u"}
		if err := s.CreateRunWith(ctx, sess, &orchestrator.Run{ID: id, SessionID: sess.ID, UserID: "u", State: orchestrator.RunRunning}, orchestrator.RunTail{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendEvents(ctx, []orchestrator.Event{{RunID: "r2", Seq: 1, Type: "a"}}); err != nil {
		t.Fatal(err)
	}
	releases, held := holdPG(t, s)
	writes := []func() error{
		func() error { return s.AppendEvents(ctx, []orchestrator.Event{{RunID: "r1", Seq: 1, Type: "a"}}) },
		func() error { return s.AppendEvents(ctx, []orchestrator.Event{{RunID: "r2", Seq: 1, Type: "again"}}) },
		func() error { return s.AcquireLock(ctx, "k", "o", time.Hour) },
	}
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		queuedOn(t, s.pgw, i)
		wg.Go(func() { errs[i] = w() })
	}
	queuedOn(t, s.pgw, len(writes))
	c0, w0 := s.WriteStats()
	close(releases[0]) // one loop takes the three queued writes together
	wg.Wait()
	for _, r := range releases[1:] {
		close(r)
	}
	for range pgWriterLoops {
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}
	// The holds (counted once answered), and the two that succeeded, each
	// alone after the batch failed.
	if c1, w1 := s.WriteStats(); c1-c0 != 2+pgWriterLoops || w1-w0 != 2+pgWriterLoops {
		t.Fatalf("%d writes in %d commits since the hold; want %d in as many", w1-w0, c1-c0, 2+pgWriterLoops)
	}
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], orchestrator.ErrConflict) {
		t.Fatalf("errors %v; want only the repeated seq's, a conflict", errs)
	}
	for run, want := range map[string]string{"r1": "a", "r2": "a"} {
		evs, err := s.ListEvents(ctx, run, 0, 10)
		if err != nil || len(evs) != 1 || evs[0].Type != want {
			t.Fatalf("events of %s = %+v, %v; want one %q", run, evs, err, want)
		}
	}
	if err := s.AcquireLock(ctx, "k", "other", time.Hour); !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("lock k: %v, want it held by o", err)
	}
}

// Writes of concurrent runs share commits, and a fenced write that
// matches no row fails alone without undoing the batch it rode in.
func TestPGWriterGroupsAndFences(t *testing.T) {
	s := open(t, freshPostgres(t))
	ctx := t.Context()
	const n = 20
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		sess := &orchestrator.Session{ID: "s-" + id, UserID: "u"}
		if err := s.CreateRunWith(ctx, sess, &orchestrator.Run{ID: id, SessionID: sess.ID, UserID: "u", State: orchestrator.RunRunning, Owner: "me"}, orchestrator.RunTail{}); err != nil {
			t.Fatal(err)
		}
	}
	releases, held := holdPG(t, s)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		owner := "me"
		if i == 7 {
			owner = "someone else" // fenced off: matches no row
		}
		wg.Go(func() {
			errs[i] = s.EndRun(ctx, &orchestrator.Run{ID: fmt.Sprintf("r%d", i), SessionID: fmt.Sprintf("s-r%d", i), UserID: "u",
				State: orchestrator.RunFinished, Owner: owner, Answer: "done"}, time.Now(), nil, orchestrator.RunTail{})
		})
	}
	queuedOn(t, s.pgw, n)
	c0, w0 := s.WriteStats()
	close(releases[0])
	wg.Wait()
	for _, r := range releases[1:] {
		close(r)
	}
	for range pgWriterLoops {
		<-held
	}
	for i, err := range errs {
		if (i == 7) != errors.Is(err, orchestrator.ErrConflict) || (i != 7 && err != nil) {
			t.Fatalf("EndRun r%d: %v", i, err)
		}
		r, err := s.GetRun(ctx, fmt.Sprintf("r%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]orchestrator.RunState{true: orchestrator.RunRunning, false: orchestrator.RunFinished}[i == 7]; r.State != want {
			t.Fatalf("r%d is %s, want %s", i, r.State, want)
		}
	}
	// The holds (counted once answered), and the n ends in one commit.
	if c1, w1 := s.WriteStats(); c1-c0 != 1+pgWriterLoops || w1-w0 != n+pgWriterLoops {
		t.Fatalf("%d writes in %d commits since the hold; want %d in %d", w1-w0, c1-c0, n+pgWriterLoops, 1+pgWriterLoops)
	}
}

// A writer whose connections the server closed reconnects: a write sent
// on a dead connection is told its outcome is unknown (never run twice),
// and each loop fails at most one write so.
func TestPGWriterReconnects(t *testing.T) {
	opts := freshPostgres(t)
	app := "wunder_writer_test_" + strings.TrimPrefix(schemaOf(t, opts.PostgresDSN), "wunder_test_")
	opts.PostgresDSN += "&application_name=" + app
	s := open(t, opts)
	ctx := t.Context()
	lock := func(i int) error { return s.AcquireLock(ctx, fmt.Sprintf("k%d", i), "o", time.Hour) }
	for i := range 2 * pgWriterLoops { // both loops connected
		if err := lock(i); err != nil {
			t.Fatal(err)
		}
	}
	admin, err := sql.Open("pgx", postgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var killed int
	if err := admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&killed); err != nil || killed < pgWriterLoops {
		t.Fatalf("terminated %d backends (%v), want at least the writer's %d", killed, err, pgWriterLoops)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var left int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends still there", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	failed := 0
	for i := 100; i < 110; i++ {
		if err := lock(i); err != nil {
			if !strings.Contains(err.Error(), "may or may not be stored") {
				t.Fatalf("write %d: %v", i, err)
			}
			failed++
		}
	}
	if failed > pgWriterLoops {
		t.Fatalf("%d writes failed after the kill; at most one a loop", failed)
	}
	var stored int
	if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM `+schemaOf(t, opts.PostgresDSN)+`.session_locks WHERE "key" LIKE 'k1__'`).Scan(&stored); err != nil || stored != 10-failed {
		t.Fatalf("%d of the writes after the kill stored (%v), want %d", stored, err, 10-failed)
	}
}

// schemaOf is the search_path a test DSN sets.
func schemaOf(t *testing.T, dsn string) string {
	t.Helper()
	_, after, ok := strings.Cut(dsn, "search_path=")
	if !ok {
		t.Fatalf("no search_path in %s", dsn)
	}
	schema, _, _ := strings.Cut(after, "&")
	return strings.TrimSuffix(schema, "&")
}

// A notification PostgreSQL refuses (a payload over its 8,000 bytes)
// does not cost the write it announces: the events are stored, as a
// refused NOTIFY on the pool only logs.
func TestPGWriterNotifyRefusedKeepsTheWrite(t *testing.T) {
	s := open(t, freshPostgres(t))
	ctx := t.Context()
	id := "r" + strings.Repeat("x", 8100)
	sess := &orchestrator.Session{ID: "s-long", UserID: "u"}
	if err := s.CreateRunWith(ctx, sess, &orchestrator.Run{ID: id, SessionID: sess.ID, UserID: "u", State: orchestrator.RunRunning}, orchestrator.RunTail{}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents(ctx, []orchestrator.Event{{RunID: id, Seq: 1, Type: "a"}}); err != nil {
		t.Fatalf("AppendEvents with an unsendable notification: %v", err)
	}
	if evs, err := s.ListEvents(ctx, id, 0, 10); err != nil || len(evs) != 1 {
		t.Fatalf("events = %+v, %v; want the one appended", evs, err)
	}
}

// The writer prepares each statement shape once per connection
// (pgstmt.go): five writes of one shape leave one prepared statement on
// the connection, a committer told not to prepare (a DSN that asks for no
// server-side statements) leaves none, and a statement the server refuses
// to prepare fails its write with the server's error while the connection
// goes on serving.
func TestPGWriterPreparesEachShapeOnce(t *testing.T) {
	s := open(t, freshPostgres(t))
	ctx := t.Context()
	sess := &orchestrator.Session{ID: "s1", UserID: "u"}
	must(t, s.CreateRunWith(ctx, sess, &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u", State: orchestrator.RunRunning}, orchestrator.RunTail{}))
	seq := int64(0)
	appendOne := func(c *pgCommitter) {
		t.Helper()
		seq++
		data := `{"n":"it's \\ "}`
		stmts, err := eventStmts([]eventRow{{RunID: "r1", Seq: seq, SessionID: "s1", Type: "t", Data: &data, CreatedAt: stamp(time.Time{})}})
		must(t, err)
		if op := (&writeOp{pg: &pgWrite{stmts: stmts}}); !c.alone(op) {
			t.Fatalf("write %d: %v", seq, op.err)
		}
	}
	prepared := func(c *pgCommitter) string {
		t.Helper()
		res := c.conn.ExecParams(ctx, "SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql", nil, nil, nil, nil).Read()
		must(t, res.Err)
		return string(res.Rows[0][0])
	}
	for _, tc := range []struct {
		prepare bool
		want    string
	}{{true, "1"}, {false, "0"}} {
		c := &pgCommitter{cfg: s.pgCfg, log: quiet, prepare: tc.prepare}
		t.Cleanup(c.close)
		for range 5 {
			appendOne(c)
		}
		if got := prepared(c); got != tc.want {
			t.Errorf("prepare=%v: %s statements prepared on the connection after 5 writes of one shape; want %s", tc.prepare, got, tc.want)
		}
	}

	c := &pgCommitter{cfg: s.pgCfg, log: quiet, prepare: true}
	t.Cleanup(c.close)
	bad := &writeOp{pg: &pgWrite{stmts: []pgStmt{{sql: "SELEC 1"}}}}
	var pe *pgconn.PgError
	if c.alone(bad) || !errors.As(bad.err, &pe) || pe.Code != "42601" {
		t.Fatalf("a statement with a syntax error: err %v; want the server's syntax error (42601)", bad.err)
	}
	appendOne(c)
	evs, err := s.ListEvents(ctx, "r1", 0, 100)
	must(t, err)
	if len(evs) != int(seq) || string(evs[0].Data) != `{"n":"it's \\ "}` {
		t.Fatalf("stored %d events (first data %s); want %d with the data written", len(evs), evs[0].Data, seq)
	}
}

func TestServerStatements(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u@h/db": true,
		"postgres://u@h/db?default_query_exec_mode=cache_statement":   true,
		"postgres://u@h/db?default_query_exec_mode=exec":              false,
		"postgres://u@h/db?default_query_exec_mode=simple_protocol":   false,
		"postgres://u@h/db?default_query_exec_mode=cache_describe":    false,
		"postgres://u@h/db?sslmode=disable&default_query_exec_mode=x": false,
	} {
		if got := serverStatements(dsn); got != want {
			t.Errorf("serverStatements(%q) = %v; want %v", dsn, got, want)
		}
	}
}

// terminate ends the server process behind conn, and waits until it is
// gone.
func terminate(t *testing.T, pid uint32) {
	t.Helper()
	admin, err := sql.Open("pgx", postgresDSN(t))
	must(t, err)
	defer admin.Close()
	var ok bool
	if err := admin.QueryRowContext(t.Context(), `SELECT pg_terminate_backend($1)`, int(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate backend %d: %v %v", pid, ok, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		must(t, admin.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, int(pid)).Scan(&n))
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d still there", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A writer connection that was idle for longer than pgIdleCheck is
// checked before a batch is sent on it: one the server closed meanwhile
// is replaced and the batch is stored, nothing reported lost. A
// connection in use is not checked (a round trip a busy writer never
// pays), so a batch sent on one that died is told its outcome is unknown.
func TestPGWriterChecksAnIdleConnection(t *testing.T) {
	s := open(t, freshPostgres(t))
	c := &pgCommitter{cfg: s.pgCfg, log: quiet, prepare: true}
	t.Cleanup(c.close)
	i := 0
	lock := func() *writeOp {
		i++
		st, err := newPGStmt(`INSERT INTO session_locks ("key", owner, expires_at) VALUES (?, 'o', now())`, fmt.Sprintf("k%d", i))
		must(t, err)
		return &writeOp{pg: &pgWrite{stmts: []pgStmt{st}}}
	}
	if op := lock(); !c.alone(op) {
		t.Fatal(op.err)
	}
	terminate(t, c.conn.PID())
	if op := lock(); c.alone(op) || !strings.Contains(op.err.Error(), "may or may not be stored") {
		t.Fatalf("a batch on a connection in use that died: %v; want an unknown outcome", op.err)
	}
	if op := lock(); !c.alone(op) {
		t.Fatalf("the next batch: %v; want a new connection", op.err)
	}
	terminate(t, c.conn.PID())
	c.used = time.Now().Add(-2 * pgIdleCheck)
	if op := lock(); !c.alone(op) {
		t.Fatalf("a batch on an idle connection that died: %v; want it checked, replaced and the batch stored", op.err)
	}
	var keys []string
	must(t, s.db.NewSelect().Table("session_locks").Column("key").Order("key").Scan(t.Context(), &keys))
	if strings.Join(keys, ",") != "k1,k3,k4" {
		t.Fatalf("stored %v; want k1, k3 and k4 (k2's connection died under it)", keys)
	}
}

// A connection keeps at most pgMaxPrepared statements: a shape past them
// is sent unprepared, and stored all the same.
func TestPGWriterPreparedBound(t *testing.T) {
	s := open(t, freshPostgres(t))
	c := &pgCommitter{cfg: s.pgCfg, log: quiet, prepare: true}
	t.Cleanup(c.close)
	st, err := newPGStmt(`INSERT INTO session_locks ("key", owner, expires_at) VALUES (?, 'o', now())`, "first")
	must(t, err)
	if op := (&writeOp{pg: &pgWrite{stmts: []pgStmt{st}}}); !c.alone(op) {
		t.Fatal(op.err)
	}
	for len(c.names) < pgMaxPrepared { // the connection's table is full
		c.names[fmt.Sprintf("SELECT %d", len(c.names))] = "taken"
	}
	st, err = newPGStmt(`INSERT INTO session_locks (owner, "key", expires_at) VALUES ('o', ?, now())`, "second")
	must(t, err)
	if op := (&writeOp{pg: &pgWrite{stmts: []pgStmt{st}}}); !c.alone(op) {
		t.Fatal(op.err)
	}
	res := c.conn.ExecParams(t.Context(), "SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql", nil, nil, nil, nil).Read()
	must(t, res.Err)
	if n := string(res.Rows[0][0]); n != "1" || len(c.names) != pgMaxPrepared {
		t.Fatalf("%s statements prepared, %d named; want the first shape's alone", n, len(c.names))
	}
	if held, err := s.LockHeld(t.Context(), "second"); err != nil || !held {
		t.Fatalf("the unprepared write: held %v, %v", held, err)
	}
}

// The writer's arguments reach PostgreSQL as bun would have written
// them: text through StoredText (a NUL and invalid UTF-8 as U+FFFD) and a
// text[] whatever its elements hold; a value with no text encoding is an
// error, not a statement.
func TestPGWriterArguments(t *testing.T) {
	s := open(t, freshPostgres(t))
	c := &pgCommitter{cfg: s.pgCfg, log: quiet, prepare: true}
	t.Cleanup(c.close)
	elems := []string{"", "plain", `quo"te`, `back\slash`, "a,b", "{braces}", "NULL", "nul\x00byte", "bad\xffutf8", "東京 ü"}
	st, err := newPGStmt(`SELECT e FROM unnest(?::text[]) WITH ORDINALITY AS t(e, i) WHERE ? ORDER BY i`, elems, true)
	must(t, err)
	if !strings.Contains(st.sql, "$1::text[]") || !strings.Contains(st.sql, "WHERE $2") {
		t.Fatalf("SQL %q; want $1 and $2", st.sql)
	}
	var got []string
	op := &writeOp{pg: &pgWrite{stmts: []pgStmt{st}}}
	if !c.alone(op) {
		t.Fatal(op.err)
	}
	res := c.conn.ExecParams(t.Context(), st.sql, st.args, nil, nil, nil).Read()
	must(t, res.Err)
	for _, row := range res.Rows {
		got = append(got, string(row[0]))
	}
	for i, e := range elems {
		if i >= len(got) || got[i] != orchestrator.StoredText(e) {
			t.Fatalf("elements back %q; want %q", got, elems)
		}
	}
	if _, err := newPGStmt(`SELECT ?`, 1.5); err == nil || !strings.Contains(err.Error(), "float64") {
		t.Fatalf("a float argument: %v; want an error naming its type", err)
	}
	if st, err := newPGStmt(`SELECT ?, ?, ?`, nil, 7, "x\x00"); err != nil || st.args[0] != nil || string(st.args[1]) != "7" || string(st.args[2]) != "x\ufffd" {
		t.Fatalf("nil, int and text arguments: %q %v", st.args, err)
	}
}
