package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/wunder/wunder/orchestrator"
)

// Backends.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Options configures [Open]. The zero value opens ./data/wunder.db with
// SQLite and applies no migrations.
type Options struct {
	// Backend is "sqlite" (default when empty) or "postgres".
	Backend string
	// SQLitePath is the database file; its parent directories are created.
	// Default "data/wunder.db".
	SQLitePath string
	// PostgresDSN is a pgx connection string (URL or key=value form), e.g.
	// "postgres://user:pass@host:5432/db?sslmode=disable". Runtime parameters
	// such as search_path are passed to the server. Required for postgres.
	PostgresDSN string
	// MaxOpenConns bounds the connection pool. Default 10 for PostgreSQL and
	// 4 for SQLite: readers, beside the writer's own connection (SQLite
	// writes are serialized anyway).
	MaxOpenConns int
	// ConnectTimeout bounds connecting and the first ping. Default 10s; a
	// connect_timeout in PostgresDSN takes precedence for each connection.
	ConnectTimeout time.Duration
	// Logger receives migration and connection messages. Default
	// slog.Default().
	Logger *slog.Logger
	// AutoMigrate applies pending migrations in Open (see [Store.Migrate]).
	AutoMigrate bool
	// Observe, when set, is told of every operation (telemetry: store
	// latency); nil observes nothing.
	Observe OpFunc
	// CheckpointDelay (SQLite) is how long after a commit the WAL is
	// checkpointed, beside the writer (checkpoint.go). Default 200ms.
	CheckpointDelay time.Duration
	// Sole (SQLite) asks to hold the database alone for as long as the
	// Store is open (sole.go); [Store.Sole] reports whether it does.
	Sole bool
}

func (o Options) withDefaults() Options {
	if o.Backend == "" {
		o.Backend = BackendSQLite
	}
	if o.SQLitePath == "" {
		o.SQLitePath = filepath.Join("data", "wunder.db")
	}
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = 10
		if o.Backend == BackendSQLite {
			o.MaxOpenConns = 4
		}
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// sqliteBusyTimeout is how long a SQLite writer waits for another process's
// write transaction before failing with SQLITE_BUSY.
const sqliteBusyTimeout = 10 * time.Second

// defaultPageLimit is the page size when Page.Limit is zero.
const defaultPageLimit = 100

// Store implements [orchestrator.Store] on bun over SQLite or PostgreSQL.
// It is safe for concurrent use.
type Store struct {
	db      *bun.DB
	backend string
	log     *slog.Logger
	// writer is the group-commit writer on SQLite (nil on PostgreSQL);
	// see writer.go. pgw is PostgreSQL's, for the writes every run makes
	// (pgwriter.go; nil on SQLite).
	writer *writer
	pgw    *writer
	// ckpt checkpoints SQLite's WAL (checkpoint.go; nil on PostgreSQL).
	ckpt *checkpointer
	// access keeps users' tool rules (access_cache.go).
	access *accessCache
	// prepared are SQLite's prepared hot statements (prepared.go).
	prepared preparedStmts
	// pgCfg and channel serve run change notifications on PostgreSQL
	// (notify.go); channel is "" on SQLite.
	pgCfg   *pgx.ConnConfig
	channel string
	// observe is Options.Observe (nil: none).
	observe OpFunc
	// sole holds the lock of Options.Sole (sole.go); nil when not held.
	sole *os.File
}

var (
	_ orchestrator.Store            = (*Store)(nil)
	_ orchestrator.ToolLogsAppender = (*Store)(nil)
)

// Open connects to the database Options describe, checks the connection
// and, with AutoMigrate, applies pending migrations.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	s := &Store{backend: opts.Backend, log: opts.Logger, observe: opts.Observe, access: newAccessCache()}
	var sqldb *sql.DB
	var err error
	switch opts.Backend {
	case BackendSQLite:
		sqldb, err = openSQLite(opts.SQLitePath, opts.Logger)
		if err != nil {
			return nil, err
		}
		s.db = bun.NewDB(sqldb, sqliteText{sqlitedialect.New()})
	case BackendPostgres:
		var cfg *pgx.ConnConfig
		sqldb, cfg, err = openPostgres(opts.PostgresDSN, opts.ConnectTimeout)
		if err != nil {
			return nil, err
		}
		s.pgCfg = cfg
		s.db = bun.NewDB(sqldb, pgText{pgdialect.New()})
	default:
		return nil, fmt.Errorf("storage: unknown backend %q (want %q or %q)", opts.Backend, BackendSQLite, BackendPostgres)
	}
	if s.observe != nil {
		s.db = s.db.WithQueryHook(queryHook{s.observe})
	}
	conns := opts.MaxOpenConns
	if opts.Backend == BackendSQLite {
		conns++ // the writer's own connection (writer.go), beside the readers'
	}
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)

	pingCtx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	if err := s.db.PingContext(pingCtx); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("storage: connect %s: %w", s.where(opts), err)
	}
	if opts.Backend == BackendSQLite && opts.Sole {
		s.takeSole(opts.SQLitePath)
	}
	if opts.Backend == BackendSQLite {
		s.ckpt = newCheckpointer(sqldb, opts.CheckpointDelay, s.log)
		s.writer = newWriter(1, func() committer { return &sqliteCommitter{db: s.db, ckpt: s.ckpt} })
	}
	if s.pgCfg != nil {
		if err := s.initNotify(pingCtx, s.pgCfg); err != nil {
			_ = s.Close()
			return nil, err
		}
		s.pgw = newWriter(pgWriterLoops, func() committer {
			c := &pgCommitter{cfg: s.pgCfg, log: s.log, prepare: serverStatements(opts.PostgresDSN)}
			if s.channel != "" {
				c.notify = s.notifyStmt
			}
			return c
		})
	}
	if opts.AutoMigrate {
		if err := s.Migrate(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// where names the database for error messages, without credentials.
func (s *Store) where(opts Options) string {
	if s.backend == BackendSQLite {
		return "sqlite " + opts.SQLitePath
	}
	if cfg, err := pgx.ParseConfig(opts.PostgresDSN); err == nil {
		return fmt.Sprintf("postgres %s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	}
	return "postgres"
}

// openSQLite opens path with the pragmas every connection needs: WAL so
// readers run beside the writer, a busy timeout for writers of other
// processes, foreign keys, and BEGIN IMMEDIATE for transactions so a write
// transaction never fails upgrading a read lock. The files are wunder's
// user's alone (filemode.go).
func openSQLite(path string, log *slog.Logger) (*sql.DB, error) {
	if path == ":memory:" {
		return nil, errors.New("storage: sqlite :memory: is not supported (each connection would get its own database); use a file")
	}
	if err := prepareSQLiteFiles(path, log); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("storage: sqlite: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// No checkpoint in the committing connection: the writer's checkpointer
	// does them, mostly beside it (checkpoint.go).
	q.Add("_pragma", "wal_autocheckpoint(0)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("storage: sqlite %s: %w", path, err)
	}
	return db, nil
}

// openPostgres opens dsn with pgx's database/sql driver.
func openPostgres(dsn string, timeout time.Duration) (*sql.DB, *pgx.ConnConfig, error) {
	if dsn == "" {
		return nil, nil, errors.New("storage: postgres: empty DSN (set storage.postgres.dsn)")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgconn's parse errors redact the password.
		return nil, nil, fmt.Errorf("storage: postgres: invalid DSN: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = timeout
	}
	// bun writes every value into the SQL text, so nearly every statement
	// is new to the connection. pgx's default mode prepares each new
	// statement that returns rows (a round trip of its own, before the one
	// that runs it), caches it, and deallocates what the cache evicts (a
	// third); the exec mode sends parse, bind and execute in one round
	// trip, its few arguments as text. Unless the DSN chose a mode.
	if !strings.Contains(dsn, "default_query_exec_mode") {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	return stdlib.OpenDB(*cfg), cfg, nil
}

// serverStatements reports whether dsn lets the PostgreSQL writer keep
// prepared statements on the server: yes unless it sets pgx's
// default_query_exec_mode to a mode without them (as for a connection
// pooler in transaction mode that does not track them).
func serverStatements(dsn string) bool {
	cfg, err := pgx.ParseConfig(dsn)
	return err == nil && (!strings.Contains(dsn, "default_query_exec_mode") ||
		cfg.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement)
}

// Close stops the writer after the writes already queued, then closes
// the database.
func (s *Store) Close() error {
	if s.writer != nil {
		s.writer.close()
	}
	if s.pgw != nil {
		s.pgw.close()
	}
	s.closePrepared()
	err := s.db.Close()
	s.dropSole()
	return err
}
