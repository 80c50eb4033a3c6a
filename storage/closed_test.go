package storage

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// closedCalls are calls of every kind a Store serves: reads through the
// pool and prepared statements, writes through the SQLite writer or the
// PostgreSQL batch writer, transactions, and the migrator.
func closedCalls(s *Store) map[string]func(ctx context.Context) error {
	now := time.Now()
	run := &orchestrator.Run{ID: "r", SessionID: "s", UserID: "u", State: orchestrator.RunRunning}
	return map[string]func(ctx context.Context) error{
		"GetSession":   func(ctx context.Context) error { _, err := s.GetSession(ctx, "s"); return err },
		"ListSessions": func(ctx context.Context) error { _, err := s.ListSessions(ctx, "u", orchestrator.Page{}); return err },
		"CreateSession": func(ctx context.Context) error {
			return s.CreateSession(ctx, &orchestrator.Session{ID: "s2", UserID: "u"})
		},
		"AppendMessages": func(ctx context.Context) error {
			return s.AppendMessages(ctx, "s", []orchestrator.Message{{Role: "user", Content: "hi"}})
		},
		"ListMessages": func(ctx context.Context) error { _, err := s.ListMessages(ctx, "s", 10); return err },
		"CreateRun":    func(ctx context.Context) error { return s.CreateRun(ctx, &orchestrator.Run{ID: "r2", SessionID: "s"}) },
		"GetRun":       func(ctx context.Context) error { _, err := s.GetRun(ctx, "r"); return err },
		"ListRuns": func(ctx context.Context) error {
			_, err := s.ListRuns(ctx, orchestrator.RunFilter{UserID: "u"})
			return err
		},
		"CountRuns": func(ctx context.Context) error {
			_, err := s.CountRuns(ctx, orchestrator.RunFilter{UserID: "u"})
			return err
		},
		"EndRun": func(ctx context.Context) error {
			r := *run
			r.State = orchestrator.RunFinished
			return s.EndRun(ctx, &r, now, nil, orchestrator.RunTail{})
		},
		"AppendEvents": func(ctx context.Context) error {
			return s.AppendEvents(ctx, []orchestrator.Event{{RunID: "r", Seq: 9, Type: "progress"}})
		},
		"ListEvents":     func(ctx context.Context) error { _, err := s.ListEvents(ctx, "r", 0, 10); return err },
		"AcquireLock":    func(ctx context.Context) error { return s.AcquireLock(ctx, "k", "o", time.Minute) },
		"ReleaseLock":    func(ctx context.Context) error { return s.ReleaseLock(ctx, "k", "o") },
		"ReleaseLocksOf": func(ctx context.Context) error { return s.ReleaseLocksOf(ctx, "o") },
		"LockHeld":       func(ctx context.Context) error { _, err := s.LockHeld(ctx, "k"); return err },
		"AppendToolLog": func(ctx context.Context) error {
			return s.AppendToolLog(ctx, &orchestrator.ToolLog{RunID: "r", Tool: "t"})
		},
		"ConfigRevision": func(ctx context.Context) error { _, err := s.ConfigRevision(ctx); return err },
		"ConfigOverride": func(ctx context.Context) error { _, _, err := s.ConfigOverride(ctx); return err },
		"SaveThroughput": func(ctx context.Context) error {
			return s.SaveThroughput(ctx, "tp", "running", now, json.RawMessage(`{}`))
		},
		"ListEvaluations": func(ctx context.Context) error { _, err := s.ListEvaluationRuns(ctx, EvaluationFilter{}); return err },
		"DeleteEvaluation": func(ctx context.Context) error {
			_, err := s.DeleteEvaluationRun(ctx, "ev")
			return err
		},
		"PutMemoryRecord": func(ctx context.Context) error {
			return s.PutMemoryRecord(ctx, &memory.Record{ID: "m", UserID: "u", SessionID: "s", Summary: "x"}, 5)
		},
		"ListMemoryRecords": func(ctx context.Context) error { _, err := s.ListMemoryRecords(ctx, "u"); return err },
		"MemoryEnabled":     func(ctx context.Context) error { _, err := s.MemoryEnabled(ctx, "u"); return err },
		"GetUser":           func(ctx context.Context) error { _, err := s.GetUser(ctx, "u"); return err },
		"CreateUser":        func(ctx context.Context) error { return s.CreateUser(ctx, &accounts.User{ID: "u2"}) },
		"ListToolFiles": func(ctx context.Context) error {
			_, err := s.ListToolFiles(ctx, "u", toolconfig.KindSkill, "x", false)
			return err
		},
		"PruneEvents":     func(ctx context.Context) error { _, err := s.PruneEvents(ctx, now); return err },
		"DeleteUserData":  func(ctx context.Context) error { return s.DeleteUserData(ctx, "u") },
		"MigrationStatus": func(ctx context.Context) error { _, err := s.MigrationStatus(ctx); return err },
		"Ping":            func(ctx context.Context) error { return s.Ping(ctx) },
	}
}

// A closed Store answers every call with an error: no panic, no hang, no
// call that seems to succeed and stores nothing. The error is not one of
// the sentinels a caller would act on (not found, conflict, busy), so
// nobody retries a lock or reports a missing session because the store
// went away.
func TestClosedStoreRefusesEveryCall(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, err := Open(t.Context(), be.fresh(t))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
			must(t, s.CreateRun(ctx, &orchestrator.Run{ID: "r", SessionID: "s", UserID: "u", State: orchestrator.RunRunning}))
			must(t, s.Close())
			for name, call := range closedCalls(s) {
				err := call(ctx)
				if err == nil {
					t.Errorf("%s on a closed store succeeded", name)
					continue
				}
				for _, sentinel := range []error{orchestrator.ErrNotFound, orchestrator.ErrConflict, orchestrator.ErrBusy} {
					if errors.Is(err, sentinel) {
						t.Errorf("%s on a closed store = %v; it must not look like %v", name, err, sentinel)
					}
				}
			}
			// Closing twice is harmless.
			if err := s.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
				t.Errorf("second Close = %v", err)
			}
		})
	}
}
