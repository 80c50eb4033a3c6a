package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wunder/wunder/orchestrator"
)

// Group commit (PostgreSQL).
//
// On PostgreSQL a write costs a network round trip and, with
// synchronous_commit on, a WAL flush at its commit; a run makes eight
// of them, one after the other. Batching them as the SQLite writer does,
// but running each op's statements one by one in the shared transaction,
// was slower than the pool (every statement still a round trip, now
// serialised). What makes a batch cheap on PostgreSQL is the extended
// protocol's pipelining: the writer sends every statement of every op of
// a batch, then one Sync, in one write to the socket, and reads the
// answers in one go. The server runs everything before the Sync as one
// implicit transaction, so a batch is one round trip and one WAL flush,
// however many runs wrote into it.
//
// An op is therefore statements, not code: SQL whose text is the write's
// shape, with its values as arguments (pgstmt.go: prepared once per
// connection), and a check that reads each statement's command tag (rows
// affected) and returns the op's outcome. A check's error must describe
// statements that changed nothing (a fence that matched no row: the
// batch commits with the other ops' writes); an op whose statements are
// not all-or-nothing in that sense is one statement of data-modifying
// CTEs. A statement that fails aborts the implicit transaction, so the
// batch left nothing, and every op runs again alone, as on SQLite. A
// failure of the connection itself (not a statement's error) leaves the
// batch's outcome unknown: its ops are told the error and are not run
// again, since running an insert twice would report a conflict for a
// write that was stored.
//
// Run change notifications (pg_notify) ride in the same batch, after the
// statements: PostgreSQL delivers them at commit, so a listener never
// hears of an event it cannot read. A refused notification (the queue
// full) is logged and the batch sent again without it, as a refused
// NOTIFY on the pool only logs. (Notifying inside the inserting
// transaction was slower with a pool of concurrent writers, which then
// serialised on the notification lock held across each flush; here the
// writer loops are few and each commit carries many ops.)
//
// Only the writes every run makes go this way (runs, events, messages,
// session locks); the rest use the pool (Store.update).

// pgWriterLoops is how many batches are in flight at once: while one
// waits for its flush, the next fills.
const pgWriterLoops = 2

// pgWriteTimeout bounds one batch's round trip.
const pgWriteTimeout = time.Minute

// pgWrite is a write as the PostgreSQL writer runs it.
type pgWrite struct {
	// stmts run in order in the batch's transaction.
	stmts []pgStmt
	// notify are pg_notify payloads ("e:<run id>") sent at its commit.
	notify []string
	// check, when set, is the op's outcome from its statements' command
	// tags, one per statement (see above for what its errors may mean).
	check func(tags []pgconn.CommandTag) error
	// fail maps a statement's error to the op's.
	fail func(err error) error
}

// pgCommitter runs a writer loop's batches on a connection of its own.
type pgCommitter struct {
	cfg *pgx.ConnConfig
	log *slog.Logger
	// notify is the statement that sends payloads (Store.notifyStmt);
	// nil without a channel.
	notify func(payloads []string) (pgStmt, error)
	// prepare is whether statements are prepared on the server (not when
	// the DSN asks for no server-side statements, as for a pooler).
	prepare bool
	conn    *pgconn.PgConn
	// names are the statements prepared on conn, by SQL text.
	names map[string]string
	// used is when conn last answered: a connection idle for longer than
	// pgIdleCheck is pinged before a batch is sent on it (a round trip
	// that a busy writer never pays).
	used time.Time
}

// pgIdleCheck is how long a writer connection may idle before it is
// checked (a server restart or pg_terminate_backend closes it meanwhile).
const pgIdleCheck = time.Second

func (c *pgCommitter) close() {
	if c.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = c.conn.Close(ctx)
	}
}

// errNotifyRefused marks a batch whose one failed statement was its
// pg_notify (a payload too long, the notification queue full).
var errNotifyRefused = errors.New("storage: run change notification refused")

// run runs ops as one batch and, when only their notification was
// refused, again without it: a notification is a hint (followers and
// heartbeats still poll), never a reason to lose the writes.
func (c *pgCommitter) run(ops []*writeOp) ([]*pgconn.Result, error) {
	results, err := c.exec(ops, true)
	if errors.Is(err, errNotifyRefused) {
		c.log.Warn("run changes not notified; other replicas see them at their next poll", "err", err)
		results, err = c.exec(ops, false)
	}
	return results, err
}

// together runs ops as one batch.
func (c *pgCommitter) together(ops []*writeOp) (done, committed bool) {
	results, err := c.run(ops)
	if statementFailed(err) {
		return false, false // rolled back: each op alone
	}
	if err != nil {
		err = fmt.Errorf("storage: postgres writer (the write may or may not be stored): %w", err)
		for _, op := range ops {
			op.err = err // outcome unknown: not run again
		}
		return true, false
	}
	c.answer(ops, results)
	return true, true
}

// alone runs op as a batch of its own.
func (c *pgCommitter) alone(op *writeOp) bool {
	results, err := c.run([]*writeOp{op})
	if err == nil {
		c.answer([]*writeOp{op}, results)
		return true
	}
	switch {
	case !statementFailed(err):
		op.err = fmt.Errorf("storage: postgres writer (the write may or may not be stored): %w", err)
	case op.pg.fail != nil:
		op.err = op.pg.fail(err)
	default:
		op.err = err
	}
	return false
}

// statementFailed tells a statement's error (its transaction rolled back,
// the connection still serves) from a failure of the connection, after
// which the batch's outcome is unknown.
func statementFailed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Severity != "FATAL" && pe.Severity != "PANIC"
}

// answer hands each op its statements' command tags.
func (c *pgCommitter) answer(ops []*writeOp, results []*pgconn.Result) {
	i := 0
	for _, op := range ops {
		n := len(op.pg.stmts)
		tags := make([]pgconn.CommandTag, n)
		for j := range n {
			tags[j] = results[i+j].CommandTag
		}
		i += n
		if op.pg.check != nil {
			op.err = op.pg.check(tags)
		}
	}
}

// exec sends ops' statements (and, with notify, their notifications) in
// one pipeline and reads every answer; an error is the first statement's
// that failed (all of it rolled back; errNotifyRefused when it was the
// notification) or the connection's.
func (c *pgCommitter) exec(ops []*writeOp, notify bool) ([]*pgconn.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgWriteTimeout)
	defer cancel()
	if c.conn != nil && time.Since(c.used) > pgIdleCheck && c.conn.Ping(ctx) != nil {
		_ = c.conn.Close(ctx) // closed by the server while idle: nothing was sent
	}
	if c.conn == nil || c.conn.IsClosed() {
		conn, err := pgconn.ConnectConfig(ctx, &c.cfg.Copy().Config)
		if err != nil {
			return nil, fmt.Errorf("storage: postgres writer: connect: %w", err)
		}
		c.conn, c.names = conn, map[string]string{}
	}
	b := &pgconn.Batch{}
	var payloads []string
	n := 0
	for _, op := range ops {
		for _, st := range op.pg.stmts {
			if err := c.queue(ctx, b, st); err != nil {
				return nil, err
			}
			n++
		}
		payloads = append(payloads, op.pg.notify...)
	}
	notified := notify && len(payloads) > 0 && c.notify != nil
	if notified {
		st, err := c.notify(payloads)
		if err == nil {
			err = c.queue(ctx, b, st)
		}
		if err != nil {
			return nil, err
		}
	}
	results, err := c.conn.ExecBatch(ctx, b).ReadAll()
	if err == nil {
		for _, r := range results {
			if err = r.Err; err != nil {
				break
			}
		}
	}
	if err != nil {
		if notified && len(results) == n+1 && statementFailed(err) {
			return nil, fmt.Errorf("%w: %w", errNotifyRefused, err)
		}
		return nil, err
	}
	c.used = time.Now()
	return results, nil
}

// pgMaxPrepared bounds the statements a writer connection keeps prepared;
// a shape past it is sent unprepared (parsed and planned each time).
const pgMaxPrepared = 256

// queue adds st to b: as its prepared statement, which it prepares (a
// round trip, once per shape and connection) when it is new. A statement
// the server refuses to prepare is sent as it is, so its error is the
// batch's and reaches its op as any statement's does.
func (c *pgCommitter) queue(ctx context.Context, b *pgconn.Batch, st pgStmt) error {
	if !c.prepare {
		b.ExecParams(st.sql, st.args, nil, nil, nil)
		return nil
	}
	name, ok := c.names[st.sql]
	if !ok && len(c.names) < pgMaxPrepared {
		name = "wunder_w" + strconv.Itoa(len(c.names))
		_, err := c.conn.Prepare(ctx, name, st.sql, nil)
		switch {
		case err == nil:
			c.names[st.sql], ok = name, true
		case !statementFailed(err):
			return fmt.Errorf("storage: postgres writer: prepare: %w", err)
		}
	}
	if !ok {
		b.ExecParams(st.sql, st.args, nil, nil, nil)
		return nil
	}
	b.ExecPrepared(name, st.args, nil, nil)
	return nil
}

// pgExec runs w through the PostgreSQL writer.
func (s *Store) pgExec(ctx context.Context, w *pgWrite) error {
	return s.submit(ctx, s.pgw, &writeOp{pg: w})
}

// pgFenced runs stmt, a write of run r fenced by r.Owner (op names it in
// errors), through the PostgreSQL writer; when it matched no row,
// ownerConflict says why.
func (s *Store) pgFenced(ctx context.Context, op string, r *orchestrator.Run, stmt pgStmt) error {
	err := s.pgExec(ctx, &pgWrite{stmts: []pgStmt{stmt}, check: matchedOne,
		fail: func(err error) error { return dbErr(err, op, "run "+r.ID) }})
	if errors.Is(err, errNoRowMatched) {
		return ownerConflict(ctx, s.db, r.ID, r.Owner)
	}
	return err
}

// errNoRowMatched is matchedOne's: a fenced statement changed nothing.
var errNoRowMatched = errors.New("storage: no row matched")

// matchedOne checks an op of one statement that must change (or return)
// a row.
func matchedOne(tags []pgconn.CommandTag) error {
	if tags[0].RowsAffected() == 0 {
		return errNoRowMatched
	}
	return nil
}
