package storage

import (
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/wunder/wunder/orchestrator"
)

// bun writes every value into the SQL text. A NUL byte there ends SQLite's
// statement early ("unrecognized token") and bun refuses it for PostgreSQL
// anyway, whose text type holds neither NUL nor invalid UTF-8. The dialects
// below pass every string bun inlines through [orchestrator.StoredText]
// first: values written and values looked up by alike, so no text breaks a
// statement and a lookup by "r\x00" is an ordinary miss. (bun's own
// quoting already turns each invalid UTF-8 byte into U+FFFD; NUL is the one
// byte it cannot quote.)
//
// JSON columns that storage encodes itself (messages.tool_calls,
// push_configs.auth) would keep a NUL as the escape \u0000; their fields go
// through StoredText before encoding (rows.go, push.go), so they obey the
// same rule as every other column.

type sqliteText struct{ *sqlitedialect.Dialect }

func (d sqliteText) AppendString(b []byte, s string) []byte {
	return d.Dialect.AppendString(b, orchestrator.StoredText(s))
}

type pgText struct{ *pgdialect.Dialect }

func (d pgText) AppendString(b []byte, s string) []byte {
	return d.Dialect.AppendString(b, orchestrator.StoredText(s))
}
