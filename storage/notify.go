package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/wunder/wunder/orchestrator"
)

// Run change notifications (PostgreSQL only): AppendEvents and
// RequestCancel NOTIFY a channel with "e:<run id>" or "c:<run id>", and
// [Store.Watcher]'s WatchRuns LISTENs on a connection of its own, so a
// replica following or cancelling a run of another one reacts at once
// instead of at its next poll or heartbeat.
//
// The channel is named after the schema the store uses, so deployments
// sharing one database in different schemas do not hear each other.

// pgNotifyChannel derives the channel of schema: a valid identifier of at
// most 63 bytes.
func pgNotifyChannel(schema string) string {
	sum := sha256.Sum256([]byte(schema))
	return "wunder_runs_" + hex.EncodeToString(sum[:8])
}

// initNotify finds the schema the connection uses and names the channel.
func (s *Store) initNotify(ctx context.Context, cfg *pgx.ConnConfig) error {
	var schema string
	if err := s.db.NewRaw("SELECT current_schema()").Scan(ctx, &schema); err != nil {
		return fmt.Errorf("storage: postgres: current schema: %w", err)
	}
	s.pgCfg, s.channel = cfg, pgNotifyChannel(schema)
	return nil
}

// notify tells the other processes that runs changed; kind is 'e'
// (events) or 'c' (cancel requested). A failure is logged: followers and
// heartbeats still poll.
func (s *Store) notify(ctx context.Context, db bun.IDB, kind byte, runIDs []string) {
	payloads := s.payloads(kind, runIDs)
	if len(payloads) == 0 {
		return
	}
	if _, err := db.ExecContext(ctx, s.notifySQL(payloads)); err != nil {
		s.log.WarnContext(ctx, "run change not notified; other replicas see it at their next poll", "runs", runIDs, "err", err)
	}
}

// payloads are the notifications of runs' changes, none without a
// channel.
func (s *Store) payloads(kind byte, runIDs []string) []string {
	if s.channel == "" || len(runIDs) == 0 {
		return nil
	}
	payloads := make([]string, len(runIDs))
	for i, id := range runIDs {
		payloads[i] = string(kind) + ":" + id
	}
	return payloads
}

// notifySQL is the statement that sends payloads on the store's channel,
// with bun's quoting (text.go: a NUL is no more valid in a payload than in
// a row).
func (s *Store) notifySQL(payloads []string) string {
	return s.db.NewRaw(notifyQuery, s.channel, pgdialect.Array(payloads)).String()
}

// notifyStmt is notifySQL for the writer (pgstmt.go).
func (s *Store) notifyStmt(payloads []string) (pgStmt, error) {
	return newPGStmt(notifyQuery, s.channel, payloads)
}

const notifyQuery = "SELECT pg_notify(?, p) FROM unnest(?::text[]) AS p"

// Watcher returns the store's run change notifications, nil when the
// backend has none (SQLite: one process).
func (s *Store) Watcher() orchestrator.RunWatcher {
	if s.channel == "" {
		return nil
	}
	return pgWatcher{s}
}

type pgWatcher struct{ s *Store }

// Reconnect delays of WatchRuns.
const (
	watchMinBackoff = 250 * time.Millisecond
	watchMaxBackoff = 5 * time.Second
)

// WatchRuns implements [orchestrator.RunWatcher]: LISTEN on a dedicated
// connection, reconnecting with backoff until ctx ends.
func (w pgWatcher) WatchRuns(ctx context.Context, fn func(orchestrator.RunChange)) error {
	backoff := watchMinBackoff
	for ctx.Err() == nil {
		listened, err := w.listen(ctx, fn)
		if ctx.Err() != nil {
			break
		}
		if listened {
			backoff = watchMinBackoff
		}
		w.s.log.Warn("run change listener disconnected; reconnecting", "err", err, "in", backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(backoff*2, watchMaxBackoff)
	}
	return nil
}

// listen serves one connection; listened reports whether LISTEN took.
func (w pgWatcher) listen(ctx context.Context, fn func(orchestrator.RunChange)) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, w.s.pgCfg.Copy())
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{w.s.channel}.Sanitize()); err != nil {
		return false, err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		kind, id, ok := strings.Cut(n.Payload, ":")
		if !ok || id == "" {
			continue
		}
		fn(orchestrator.RunChange{RunID: id, Cancel: kind == "c"})
	}
}
