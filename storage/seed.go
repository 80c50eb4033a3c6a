package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// SeedOptions size a synthetic history written by [Store.Seed].
type SeedOptions struct {
	// Sessions is how many sessions to add, each with one finished run
	// and its two messages.
	Sessions int
	// Events is how many events to add in all, spread evenly over the
	// runs (at least three a run: progress, the answer, final).
	Events int
	// Users is how many users own the sessions. Default Sessions/10.
	Users int
	// Prefix starts every id and user id, so seeds do not collide with
	// each other or with real data. Default "seed".
	Prefix string
	// Progress, when set, is told the sessions written so far.
	Progress func(sessions int)
}

// seedChunk is how many sessions (and their runs, messages and events)
// one write carries.
const seedChunk = 500

// Seed writes a synthetic history of finished runs, for the scale
// benchmarks (issue 13: throughput with a million events and a hundred
// thousand sessions already stored) and `wunder bench seed`. Rows are
// written in bulk, seedChunk sessions a transaction, dated over the past
// 30 days so time-ordered lists page through them.
func (s *Store) Seed(ctx context.Context, o SeedOptions) error {
	if o.Sessions <= 0 {
		return invalid("seed needs at least one session")
	}
	if o.Users <= 0 {
		o.Users = max(1, o.Sessions/10)
	}
	if o.Prefix == "" {
		o.Prefix = "seed"
	}
	perRun := max(3, o.Events/o.Sessions)
	now := time.Now().UTC()
	span := 30 * 24 * time.Hour
	for from := 0; from < o.Sessions; from += seedChunk {
		n := min(seedChunk, o.Sessions-from)
		sessions := make([]sessionRow, 0, n)
		runs := make([]runRow, 0, n)
		msgs := make([]messageRow, 0, 2*n)
		events := make([]eventRow, 0, n*perRun)
		for i := from; i < from+n; i++ {
			at := now.Add(-span + time.Duration(i)*span/time.Duration(o.Sessions))
			done := at.Add(800 * time.Millisecond)
			sid, rid := fmt.Sprintf("%s_sess_%08d", o.Prefix, i), fmt.Sprintf("%s_run_%08d", o.Prefix, i)
			user := fmt.Sprintf("%s_user_%06d", o.Prefix, i%o.Users)
			q, a := fmt.Sprintf("question %d: what is in the quarterly report?", i), "The report covers revenue, costs and the outlook for the next quarter."
			sessions = append(sessions, sessionRow{ID: sid, UserID: user, Title: q, CreatedAt: at, UpdatedAt: done})
			runs = append(runs, runRow{ID: rid, SessionID: sid, UserID: user, State: "finished", StopReason: "model_response",
				Question: q, Answer: a, ModelName: "seed", Owner: "seed", InputTokens: 120, OutputTokens: 40, TotalTokens: 160,
				LastSeq: int64(perRun), CreatedAt: at, StartedAt: &at, FinishedAt: &done})
			msgs = append(msgs, messageRow{SessionID: sid, RunID: rid, Role: "user", Content: q, CreatedAt: at},
				messageRow{SessionID: sid, RunID: rid, Role: "assistant", Content: a, CreatedAt: done})
			for seq := 1; seq <= perRun; seq++ {
				typ, data := "llm_output_delta", fmt.Sprintf(`{"round":1,"delta":"part %d of the answer "}`, seq)
				switch seq {
				case 1:
					typ, data = "progress", `{"stage":"started","summary":"run started"}`
				case perRun - 1:
					typ, data = "llm_output", `{"round":1,"content":"`+a+`"}`
				case perRun:
					typ, data = "final", `{"answer":"`+a+`","state":"finished","stop_reason":"model_response","usage":{"input_tokens":120,"output_tokens":40,"total_tokens":160}}`
				}
				events = append(events, eventRow{RunID: rid, Seq: int64(seq), SessionID: sid, Type: typ, Data: &data,
					CreatedAt: at.Add(time.Duration(seq) * time.Millisecond)})
			}
		}
		err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
			return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				for _, m := range []any{&sessions, &runs, &msgs} {
					if _, err := tx.NewInsert().Model(m).Exec(ctx); err != nil {
						return err
					}
				}
				for at := 0; at < len(events); at += eventChunk {
					chunk := events[at:min(at+eventChunk, len(events))]
					if _, err := tx.NewInsert().Model(&chunk).Exec(ctx); err != nil {
						return err
					}
				}
				return nil
			})
		})
		if err != nil {
			return dbErr(err, "seed", fmt.Sprintf("sessions %d to %d", from, from+n))
		}
		if o.Progress != nil {
			o.Progress(from + n)
		}
	}
	return s.settle(ctx)
}

// settle leaves the store as a server in use for a while would find it,
// rather than busy with the aftermath of a bulk write that a measurement
// taken next would pay for: fresh statistics for the planner, and on
// PostgreSQL the seeded tables vacuumed (else autovacuum does it minutes
// later, insert-triggered) and a checkpoint (else the checkpointer writes
// the seeded pages out over the next minutes). A role that may not
// CHECKPOINT (PostgreSQL 15+: superuser or pg_checkpoint) only skips it.
// On SQLite the WAL is checkpointed into the database and truncated.
func (s *Store) settle(ctx context.Context) error {
	if s.backend != BackendPostgres {
		var busy, log, done int
		err := s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done)
		if err != nil {
			return dbErr(err, "seed", "checkpoint")
		}
		_, err = s.db.ExecContext(ctx, "ANALYZE")
		return dbErr(err, "seed", "analyze")
	}
	if _, err := s.db.ExecContext(ctx, "VACUUM (ANALYZE) sessions, runs, messages, events"); err != nil {
		return dbErr(err, "seed", "vacuum")
	}
	if _, err := s.db.ExecContext(ctx, "CHECKPOINT"); err != nil && !isInsufficientPrivilege(err) {
		return dbErr(err, "seed", "checkpoint")
	}
	return nil
}
