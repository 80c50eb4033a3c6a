package storage

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
)

// Group commit (SQLite).
//
// SQLite has one writer. Each transaction costs a BEGIN IMMEDIATE, a WAL
// write and the shared-memory locks around it, whatever it holds, and a run
// makes a dozen small writes; run one transaction each and the store is
// the serial bottleneck of the server. So on SQLite every write goes
// through one writer goroutine: it takes whatever writes are waiting and
// runs them in one transaction and commits once. N runs writing at once cost
// one commit, not N. When it finds one write alone, it yields the processor
// once first (runtime.Gosched), so the goroutines that are runnable at that
// moment — runs about to write — can queue theirs: under load that took a
// commit from about 2 writes to 5 (8 runs at once) and from 5 to 15 (32),
// and it costs nothing when nothing else is runnable.
//
// What each caller is told is what was stored: an op is answered only
// after its transaction committed (or with the error that ended it); an op
// that failed leaves nothing, and the others of its batch commit (below).
// An op whose caller gave up (ctx done) before
// the writer took it is never run; once taken, it runs to the end without
// the caller's cancellation, and the caller waits for the answer, so a
// reported failure never hides a committed write. Durability is that of a
// transaction of its own: synchronous=NORMAL in WAL mode either way.
//
// The ops of a batch share the transaction without savepoints (a
// savepoint costs two more statements an op, and ops rarely fail). When
// one fails, the whole transaction is rolled back, so it left nothing,
// and every op of the batch runs again alone, in a transaction of its
// own: a failed op fails alone, and the others are committed. An op may
// therefore run twice, the first time rolled back; its fn must not act
// outside the database (none does: NOTIFY is PostgreSQL's, which does not
// batch).
//
// An op must write only through the bun.IDB it is given (the
// transaction), must not call back into the Store's write methods
// (the writer would wait for itself), and should be short: the batch
// waits for it.
//
// On PostgreSQL update runs the op on the pool directly: the server takes
// concurrent writers, and an op that needs several statements opens its
// own transaction (db.RunInTx).

// maxBatch bounds the ops of one transaction, so one commit never waits
// for an unbounded queue.
const maxBatch = 128

// writeOp is one write waiting for, or done by, the writer.
type writeOp struct {
	ctx context.Context
	// fn is the write on SQLite, pg on PostgreSQL (pgwriter.go).
	fn func(ctx context.Context, db bun.IDB) error
	pg *pgWrite
	// state: opQueued until the writer takes it (opTaken) or its caller
	// gives up first (opAbandoned).
	state atomic.Int32
	err   error
	done  chan struct{}
}

const (
	opQueued int32 = iota
	opTaken
	opAbandoned
)

var errClosed = errors.New("storage: the store is closed")

// writer is a group-commit writer: one or more loops, each with its own
// committer (SQLite: one loop over the database; PostgreSQL: pgwriter.go,
// a connection per loop).
type writer struct {
	ops chan *writeOp
	// mu guards closed against sends on a closed channel.
	mu     sync.RWMutex
	closed bool
	wg     sync.WaitGroup
	// commits and batched count transactions and the ops they held
	// (Store.WriteStats).
	commits, batched atomic.Int64
}

// committer runs batches of ops for one writer loop.
type committer interface {
	// together runs ops in one transaction and commits. done is false,
	// everything rolled back and nothing answered, when an op failed and
	// each op must run alone; committed tells a done batch that was
	// committed from one whose every op was told an error.
	together(ops []*writeOp) (done, committed bool)
	// alone runs op in a transaction of its own and sets op.err; it
	// reports whether it committed.
	alone(op *writeOp) bool
	close()
}

func newWriter(loops int, newCommitter func() committer) *writer {
	w := &writer{ops: make(chan *writeOp, 4*maxBatch)}
	for range loops {
		c := newCommitter()
		w.wg.Go(func() { w.loop(c) })
	}
	return w
}

// close stops the writer after the ops already queued.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.ops)
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// do queues op and waits for its answer.
func (w *writer) do(ctx context.Context, op *writeOp) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("storage: waiting to write: %w", err)
	}
	op.ctx, op.done = ctx, make(chan struct{})
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return errClosed
	}
	select {
	case w.ops <- op:
	case <-ctx.Done():
		w.mu.RUnlock()
		return fmt.Errorf("storage: waiting to write: %w", ctx.Err())
	}
	w.mu.RUnlock()
	select {
	case <-op.done:
		return op.err
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opAbandoned) {
			return fmt.Errorf("storage: waiting to write: %w", ctx.Err())
		}
		<-op.done // taken: its outcome is what the caller must hear
		return op.err
	}
}

func (w *writer) loop(c committer) {
	defer c.close()
	batch := make([]*writeOp, 0, maxBatch)
	for op := range w.ops {
		batch = append(batch[:0], op)
		for yielded := false; ; yielded = true {
			w.drain(&batch)
			// One op alone: let the goroutines that are runnable now (runs
			// about to write) queue theirs before committing, once.
			if len(batch) > 1 || yielded {
				break
			}
			runtime.Gosched()
		}
		w.commit(c, batch)
	}
}

// drain adds the ops waiting now to batch, up to maxBatch.
func (w *writer) drain(batch *[]*writeOp) {
	for len(*batch) < maxBatch {
		select {
		case more, ok := <-w.ops:
			if !ok {
				return
			}
			*batch = append(*batch, more)
		default:
			return
		}
	}
}

// commit runs one batch in one transaction and answers its ops.
func (w *writer) commit(c committer, batch []*writeOp) {
	taken := batch[:0]
	for _, op := range batch {
		if op.state.CompareAndSwap(opQueued, opTaken) {
			taken = append(taken, op)
		} else {
			close(op.done) // abandoned: never run
		}
	}
	if len(taken) == 0 {
		return
	}
	defer func() {
		for _, op := range taken {
			close(op.done)
		}
	}()
	if len(taken) > 1 {
		if done, committed := c.together(taken); done {
			if committed {
				w.commits.Add(1)
				w.batched.Add(int64(len(taken)))
			}
			return
		}
	}
	// Alone: one op, or a batch in which an op failed (rolled back whole,
	// so the failure left nothing): each op in a transaction of its own.
	for _, op := range taken {
		if c.alone(op) {
			w.commits.Add(1)
			w.batched.Add(1)
		}
	}
}

// sqliteCommitter runs a SQLite writer's batches through bun on a
// connection of its own, and takes the writer's part in checkpoints
// (checkpoint.go).
//
// The connection is the writer's alone because SQLite keeps a page cache
// per connection and empties it when a transaction begins after another
// connection wrote. Batches taken by whichever pooled connection was idle
// each began with an empty cache and read back, from the WAL, the pages
// the previous batch had just written (8 % of the store's CPU in
// BenchmarkCreateEndedRun). Kept by the only writer, the cache stays warm.
type sqliteCommitter struct {
	db   *bun.DB
	ckpt *checkpointer
	conn *bun.Conn // nil until the first batch, and after one failed to begin
}

func (c *sqliteCommitter) close() {
	c.ckpt.close()
	c.drop()
}

// drop closes the writer's connection; the next batch takes a new one.
func (c *sqliteCommitter) drop() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// begin starts a transaction on the writer's connection.
func (c *sqliteCommitter) begin() (bun.Tx, error) {
	ctx := context.Background()
	if c.conn == nil {
		conn, err := c.db.Conn(ctx)
		if err != nil {
			return bun.Tx{}, err
		}
		c.conn = &conn
	}
	tx, err := c.conn.BeginTx(ctx, nil)
	if err != nil {
		c.drop() // a broken connection is not used again
	}
	return tx, err
}

// together runs ops in one transaction without savepoints (a savepoint
// costs two statements an op) and commits.
func (c *sqliteCommitter) together(ops []*writeOp) (done, committed bool) {
	c.ckpt.beforeBatch()
	tx, err := c.begin()
	if err != nil {
		return false, false
	}
	for _, op := range ops {
		if op.err = run(context.WithoutCancel(op.ctx), op.fn, tx); op.err != nil {
			_ = tx.Rollback()
			return false, false
		}
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		return false, false
	}
	c.ckpt.committed()
	return true, true
}

// alone runs op in a transaction of its own.
func (c *sqliteCommitter) alone(op *writeOp) bool {
	c.ckpt.beforeBatch()
	tx, err := c.begin()
	if err != nil {
		op.err = fmt.Errorf("storage: begin: %w", err)
		return false
	}
	if op.err = run(context.WithoutCancel(op.ctx), op.fn, tx); op.err != nil {
		_ = tx.Rollback()
		return false
	}
	if err := tx.Commit(); err != nil {
		op.err = fmt.Errorf("storage: commit: %w", err)
		return false
	}
	c.ckpt.committed()
	return true
}

// run calls fn, turning a panic into an error (the writer serves every
// goroutine of the process and must not die with one op).
func run(ctx context.Context, fn func(ctx context.Context, db bun.IDB) error, db bun.IDB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("storage: write panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return fn(ctx, db)
}

// update runs fn as a write: on SQLite through the group-commit writer, in
// a transaction shared with other writes; on PostgreSQL on the pool.
func (s *Store) update(ctx context.Context, fn func(ctx context.Context, db bun.IDB) error) error {
	if s.writer == nil {
		return fn(ctx, s.db)
	}
	return s.submit(ctx, s.writer, &writeOp{fn: fn})
}

// submit hands op to the writer w and waits for it, timing it for
// Options.Observe as "write".
func (s *Store) submit(ctx context.Context, w *writer, op *writeOp) error {
	if s.observe == nil {
		return w.do(ctx, op)
	}
	start := time.Now()
	err := w.do(ctx, op)
	s.observe(ctx, "write", start, err)
	return err
}

// WriteStats reports the group-commit writer's transactions and the writes
// they held (on PostgreSQL the batch writer's, pgwriter.go): writes/commits
// is the batching.
func (s *Store) WriteStats() (commits, writes int64) {
	w := s.writer
	if w == nil {
		w = s.pgw
	}
	if w == nil {
		return 0, 0
	}
	return w.commits.Load(), w.batched.Load()
}
