package storage

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// OpFunc is told of every store operation once it ends: op names it
// (bounded: the SQL operation and table of a bun query such as
// "select_runs", or "write" for a write through SQLite's group-commit
// writer, timed as its caller waits for it), start is when it began and
// err its error. ctx is the operation's (a trace to continue). It must
// be cheap and must not block.
type OpFunc func(ctx context.Context, op string, start time.Time, err error)

// queryHook reports bun's queries to an OpFunc.
type queryHook struct{ f OpFunc }

var _ bun.QueryHook = queryHook{}

func (queryHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (h queryHook) AfterQuery(ctx context.Context, ev *bun.QueryEvent) {
	h.f(ctx, opName(ev), ev.StartTime, ev.Err)
}

// tabled is what bun's query builders tell of their table.
type tabled interface{ GetTableName() string }

// opName is "operation_table" ("select_runs"), or the operation alone for
// raw SQL.
func opName(ev *bun.QueryEvent) string {
	op := strings.ToLower(ev.Operation())
	if q, ok := ev.IQuery.(tabled); ok {
		if t := strings.Trim(q.GetTableName(), `"`+"`"); t != "" && !strings.ContainsAny(t, " ,(") {
			return op + "_" + t
		}
	}
	return op
}
