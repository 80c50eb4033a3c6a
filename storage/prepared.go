package storage

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// Prepared statements for the writes every run makes on SQLite: its run
// row (created, then updated), its history, its event batches and its
// session lock. bun
// writes every value into the SQL text, so SQLite parsed each statement
// anew; parsing was a quarter of the writer's time in a profile of no-tool
// runs (docs/benchmarks.md). These statements bind their values instead,
// and modernc's driver keeps a prepared statement compiled (database/sql
// keeps one per connection).
//
// Values are bound as bun writes them (bind): text through StoredText,
// times in bun's format, NULL for nil pointers, so what a query finds
// does not depend on the path that stored it; the store suite reads back
// every column either way. The prepared path is taken in the writer's
// transaction only; elsewhere (PostgreSQL, whose placeholders differ) the
// caller takes bun's.

// maxPreparedRows bounds the rows of a multi-row INSERT that gets a
// statement of its own; larger batches take bun's path.
const maxPreparedRows = 32

type preparedStmts struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// bunLayout is how bun's dialects write a time (in UTC).
const bunLayout = "2006-01-02 15:04:05.999999-07:00"

// bunTime is a time as bun's dialects write it: t.UTC().Format(bunLayout),
// formatted by hand for the years a store holds (every run's write binds a
// few times, and Format's general engine was most of bind's cost).
func bunTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 1000 || year > 9999 {
		return t.Format(bunLayout)
	}
	hour, minute, sec := t.Clock()
	var b [32]byte
	n := 0
	put := func(v, digits int) {
		for i := digits - 1; i >= 0; i-- {
			b[n+i] = byte('0' + v%10)
			v /= 10
		}
		n += digits
	}
	sep := func(c byte) { b[n] = c; n++ }
	put(year, 4)
	sep('-')
	put(int(month), 2)
	sep('-')
	put(day, 2)
	sep(' ')
	put(hour, 2)
	sep(':')
	put(minute, 2)
	sep(':')
	put(sec, 2)
	if us := t.Nanosecond() / 1000; us != 0 { // .999999: truncated, trailing zeros dropped
		sep('.')
		put(us, 6)
		for b[n-1] == '0' {
			n--
		}
	}
	n += copy(b[n:], "+00:00")
	return string(b[:n])
}

// bind turns values into arguments as bun would write them (a new slice).
func bind(in ...any) []any {
	vals := append([]any(nil), in...)
	for i, v := range vals {
		switch v := v.(type) {
		case string:
			vals[i] = orchestrator.StoredText(v)
		case *string:
			if v == nil {
				vals[i] = nil
			} else {
				vals[i] = orchestrator.StoredText(*v)
			}
		case time.Time:
			vals[i] = bunTime(v)
		case *time.Time:
			if v == nil {
				vals[i] = nil
			} else {
				vals[i] = bunTime(*v)
			}
		}
	}
	return vals
}

// execPrepared runs query with args through a prepared statement when db
// is the writer's transaction on SQLite; ok is false when it did not (the
// caller takes bun's path).
func (s *Store) execPrepared(ctx context.Context, db bun.IDB, query string, args []any) (res sql.Result, ok bool, err error) {
	st := s.txStmt(ctx, db, query)
	if st == nil {
		return nil, false, nil
	}
	res, err = st.ExecContext(ctx, args...)
	return res, true, err
}

// queryPrepared is execPrepared for a statement that answers rows (an
// INSERT … RETURNING); the caller closes them.
func (s *Store) queryPrepared(ctx context.Context, db bun.IDB, query string, args []any) (rows *sql.Rows, ok bool, err error) {
	st := s.txStmt(ctx, db, query)
	if st == nil {
		return nil, false, nil
	}
	rows, err = st.QueryContext(ctx, args...)
	return rows, true, err
}

// txStmt is query's prepared statement in db when db is the writer's
// transaction on SQLite; nil otherwise, or when it cannot be prepared
// (bun's path still works).
func (s *Store) txStmt(ctx context.Context, db bun.IDB, query string) *sql.Stmt {
	tx, isTx := db.(bun.Tx)
	if s.backend != BackendSQLite || s.writer == nil || !isTx {
		return nil
	}
	stmt, err := s.stmt(ctx, query)
	if err != nil {
		return nil
	}
	return tx.Tx.StmtContext(ctx, stmt)
}

func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	if st := s.prepared.stmts[query]; st != nil {
		return st, nil
	}
	st, err := s.db.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.prepared.stmts == nil {
		s.prepared.stmts = map[string]*sql.Stmt{}
	}
	s.prepared.stmts[query] = st
	return st, nil
}

// closePrepared closes the prepared statements.
func (s *Store) closePrepared() {
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	for q, st := range s.prepared.stmts {
		_ = st.Close()
		delete(s.prepared.stmts, q)
	}
}

// insertSQL is a multi-row INSERT of n rows into table's columns.
func insertSQL(table string, cols []string, n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO "` + table + `" ("` + strings.Join(cols, `", "`) + `") VALUES `)
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// insertSQLs memoizes insertSQL for one table and up to maxPreparedRows
// rows: the inserts every run makes are built once, not on each write.
type insertSQLs struct {
	table string
	cols  []string
	sqls  [maxPreparedRows + 1]string
}

func newInsertSQLs(table string, cols []string) *insertSQLs {
	c := &insertSQLs{table: table, cols: cols}
	for n := 1; n <= maxPreparedRows; n++ {
		c.sqls[n] = insertSQL(table, cols, n)
	}
	return c
}

// of is the INSERT of n rows.
func (c *insertSQLs) of(n int) string {
	if n >= 1 && n <= maxPreparedRows {
		return c.sqls[n]
	}
	return insertSQL(c.table, c.cols, n)
}

var (
	insertEvents   = newInsertSQLs("events", eventCols)
	insertMessages = newInsertSQLs("messages", messageCols)
	insertToolLogs = newInsertSQLs("tool_logs", toolLogCols)
)

var (
	eventCols   = []string{"run_id", "seq", "session_id", "type", "data", "created_at"}
	messageCols = []string{"session_id", "run_id", "role", "content", "reasoning_content", "tool_calls", "tool_call_id", "name", "created_at", "attachments"}
	runCols     = []string{"id", "session_id", "user_id", "state", "stop_reason", "question", "answer", "error", "model_name", "owner",
		"spec", "pending", "input_tokens", "output_tokens", "total_tokens", "last_seq", "created_at", "started_at", "finished_at"}
	insertRunSQL     = insertSQL("runs", runCols, 1)
	sessionCols      = []string{"id", "user_id", "title", "created_at", "updated_at"}
	insertSessionSQL = insertSQL("sessions", sessionCols, 1)
	toolLogCols      = []string{"run_id", "session_id", "user_id", "call_id", "tool", "arguments", "result", "is_error", "duration_ms", "created_at",
		"front_end", "via", "outcome", "reason"}
	insertToolLogSQL = insertSQL("tool_logs", toolLogCols, 1)
	// updateRunSQL writes runMutable, fenced by the owner (UpdateRun).
	updateRunSQL = `UPDATE "runs" SET "state" = ?, "stop_reason" = ?, "answer" = ?, "error" = ?, "input_tokens" = ?, "output_tokens" = ?, ` +
		`"total_tokens" = ?, "last_seq" = ?, "started_at" = ?, "finished_at" = ?, "pending" = ? WHERE "id" = ? AND owner = ?`
)

func eventArgs(rows []eventRow) []any {
	args := make([]any, 0, len(eventCols)*len(rows))
	for _, r := range rows {
		args = append(args, r.RunID, r.Seq, r.SessionID, r.Type, r.Data, r.CreatedAt)
	}
	return bind(args...)
}

func messageArgs(rows []messageRow) []any {
	args := make([]any, 0, len(messageCols)*len(rows))
	for _, r := range rows {
		args = append(args, r.SessionID, r.RunID, r.Role, r.Content, r.ReasoningContent, r.ToolCalls, r.ToolCallID, r.Name, r.CreatedAt, r.Attachments)
	}
	return bind(args...)
}

func runArgs(r *runRow) []any {
	return bind(r.ID, r.SessionID, r.UserID, r.State, r.StopReason, r.Question, r.Answer, r.Error, r.ModelName, r.Owner,
		r.Spec, r.Pending, r.InputTokens, r.OutputTokens, r.TotalTokens, r.LastSeq, r.CreatedAt, r.StartedAt, r.FinishedAt)
}

func sessionArgs(r *sessionRow) []any {
	return bind(r.ID, r.UserID, r.Title, r.CreatedAt, r.UpdatedAt)
}

func toolLogArgs(r *toolLogRow) []any {
	return bind(r.RunID, r.SessionID, r.UserID, r.CallID, r.Tool, r.Arguments, r.Result, r.IsError, r.DurationMS, r.CreatedAt,
		r.FrontEnd, r.Via, r.Outcome, r.Reason)
}

func runUpdateArgs(r *runRow) []any {
	return bind(r.State, r.StopReason, r.Answer, r.Error, r.InputTokens, r.OutputTokens, r.TotalTokens, r.LastSeq,
		r.StartedAt, r.FinishedAt, r.Pending, r.ID, r.Owner)
}

// queryRow runs a read every run makes (the user's memory switch and tool
// access) as a prepared statement: on SQLite prepared once per process
// (parsing is most of such a read's cost there), on PostgreSQL cached per
// connection by pgx. q
// uses ? placeholders (numbered for PostgreSQL here) and holds no literal
// question mark; arguments are bound as bun writes them.
//
// op names it for Options.Observe as the query hook names bun's queries
// ("select_users"); the row's error comes with Scan, so it is reported
// as a success.
func (s *Store) queryRow(ctx context.Context, op, q string, args ...any) *sql.Row {
	if s.observe != nil {
		defer s.observe(ctx, op, time.Now(), nil)
	}
	if s.backend == BackendPostgres {
		q = pgSQL(q)
		// Prepared and cached per connection (the pool's default mode,
		// exec, would parse and plan it every time).
		return s.db.DB.QueryRowContext(ctx, q, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
	}
	args = bind(args...)
	if st, err := s.stmt(ctx, q); err == nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.DB.QueryRowContext(ctx, q, args...)
}
