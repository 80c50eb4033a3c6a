package storage

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wunder/wunder/orchestrator"
)

// Statements of the PostgreSQL writer, with bound parameters.
//
// bun writes every value into the SQL text, so every statement the writer
// sent was new to the server: parsing, analysing and planning them was
// about 40 % of PostgreSQL's CPU in a profile of no-tool runs
// (docs/benchmarks.md). The writer's statements are therefore SQL whose
// text depends only on the write's shape (which tables, how many rows),
// with the values as arguments, and the writer prepares each shape once per
// connection (pgCommitter.queue): the server parses and plans it once and
// then only binds and runs it.
//
// The arguments go in PostgreSQL's text format, as exactly the text bun
// would have written between quotes (bind: text through StoredText, times
// in bun's format), and the server infers each parameter's type from where
// it stands, as it did for bun's literals; a parameter whose type the
// context does not fix carries a cast. So what a query finds does not
// depend on the path that stored it.

// pgStmt is one statement of a pgWrite: SQL with $n placeholders and its
// arguments in text format (a nil one is NULL).
type pgStmt struct {
	sql  string
	args [][]byte
}

// newPGStmt is q, with ? placeholders (and no literal question mark), and
// vals bound as bun writes them.
func newPGStmt(q string, vals ...any) (pgStmt, error) {
	args, err := pgArgs(bind(vals...))
	if err != nil {
		return pgStmt{}, err
	}
	return pgStmt{sql: pgSQL(q), args: args}, nil
}

// boundPGStmt is q with args already bound (bind).
func boundPGStmt(q string, args []any) (pgStmt, error) {
	enc, err := pgArgs(args)
	if err != nil {
		return pgStmt{}, err
	}
	return pgStmt{sql: pgSQL(q), args: enc}, nil
}

// pgArgs encodes bound values (bind) in PostgreSQL's text format.
func pgArgs(vals []any) ([][]byte, error) {
	args := make([][]byte, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
		case string:
			args[i] = []byte(v)
		case int64:
			args[i] = strconv.AppendInt(nil, v, 10)
		case int:
			args[i] = strconv.AppendInt(nil, int64(v), 10)
		case bool:
			args[i] = []byte(strconv.FormatBool(v))
		case []string:
			args[i] = pgTextArray(v)
		default:
			return nil, fmt.Errorf("storage: no PostgreSQL text encoding for %T", v)
		}
	}
	return args, nil
}

// pgTextArray is ss as a text[] literal, each element as bun writes text.
func pgTextArray(ss []string) []byte {
	b := []byte{'{'}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for _, c := range []byte(orchestrator.StoredText(s)) {
			if c == '"' || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, c)
		}
		b = append(b, '"')
	}
	return append(b, '}')
}

// pgSQLCache holds pgSQL's answers for up to pgSQLCacheMax shapes (the
// writer's are a few dozen: one per table and row count).
var (
	pgSQLCache    sync.Map
	pgSQLCached   atomic.Int64
	pgSQLCacheMax = int64(1024)
)

// pgSQL turns q's ? placeholders into PostgreSQL's $1, $2, ...; q holds
// no literal question mark.
func pgSQL(q string) string {
	if v, ok := pgSQLCache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			b.WriteByte(q[i])
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	out := b.String()
	if pgSQLCached.Add(1) <= pgSQLCacheMax {
		pgSQLCache.Store(q, out)
	}
	return out
}

// placeholders is n ? placeholders separated by commas.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
