package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/storage"
)

// janitor applies the retention settings in the background: once at
// start, then every storage.janitor_interval_s. It deletes
//
//   - with storage.event_retention_days, the events of runs that ended
//     that long ago (storage.PruneEvents), and the memory summarisation
//     tasks that ended that long ago (PruneMemoryTasks);
//   - with storage.audit_retention_days (90 by default), the audit records
//     (tool logs) older than that (PruneToolLogs);
//   - with storage.a2a_peer_id_retention_days (30 by default), the A2A
//     pass-through's records of who owns a task or context at a peer that
//     were not used for that long (PrunePeerIDs);
//   - with workspace.retention_days, workspace files not modified for that
//     long, then the directories that left empty (never a workspace root).
//
// Every replica runs one; the deletions are idempotent.
type janitor struct {
	store     *storage.Store
	root      string // workspace.root
	wsDays    int
	eventDays int
	auditDays int
	peerDays  int
	every     time.Duration
	log       *slog.Logger

	loop *periodic
}

// janitorReport is what one pass deleted.
type janitorReport struct {
	Runs, ToolLogs, MemoryTasks, PeerIDs, Files, Dirs int
}

func newJanitor(cfg *config.Config, store *storage.Store, log *slog.Logger) *janitor {
	return &janitor{store: store, root: cfg.Workspace.Root, wsDays: cfg.Workspace.RetentionDays,
		eventDays: cfg.Storage.EventRetentionDays, auditDays: cfg.Storage.AuditRetentionDays, peerDays: cfg.Storage.A2APeerIDRetentionDays,
		every: cfg.Storage.JanitorInterval(), log: log.With("component", "janitor")}
}

// start runs the janitor until close; nothing when no retention is set.
func (j *janitor) start() {
	if j.wsDays == 0 && j.eventDays == 0 && j.auditDays == 0 && j.peerDays == 0 {
		return
	}
	j.loop = startPeriodic(j.every, true, func(ctx context.Context) {
		if rep, err := j.runOnce(ctx, time.Now()); err != nil && ctx.Err() == nil {
			j.log.Warn("retention pass failed", "err", err)
		} else if rep != (janitorReport{}) {
			j.log.Info("retention pass", "runs_pruned", rep.Runs, "tool_logs", rep.ToolLogs, "memory_tasks", rep.MemoryTasks, "a2a_peer_ids", rep.PeerIDs, "files", rep.Files, "dirs", rep.Dirs)
		}
	})
}

func (j *janitor) close() {
	if j != nil {
		j.loop.close()
	}
}

// runOnce is one pass as of now.
func (j *janitor) runOnce(ctx context.Context, now time.Time) (janitorReport, error) {
	var rep janitorReport
	var errs []error
	if j.eventDays > 0 {
		var err error
		rep.Runs, err = j.store.PruneEvents(ctx, now.Add(-days(j.eventDays)))
		errs = append(errs, err)
		rep.MemoryTasks, err = j.store.PruneMemoryTasks(ctx, now.Add(-days(j.eventDays)))
		errs = append(errs, err)
	}
	if j.auditDays > 0 {
		var err error
		rep.ToolLogs, err = j.store.PruneToolLogs(ctx, now.Add(-days(j.auditDays)))
		errs = append(errs, err)
	}
	if j.peerDays > 0 {
		var err error
		rep.PeerIDs, err = j.store.PrunePeerIDs(ctx, now.Add(-days(j.peerDays)))
		errs = append(errs, err)
	}
	if j.wsDays > 0 {
		files, dirs, err := pruneWorkspaces(ctx, j.root, now.Add(-days(j.wsDays)))
		rep.Files, rep.Dirs = files, dirs
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

// pruneWorkspaces deletes, in every user's workspace under root, the files
// (and symlinks, judged by their own time) last modified before cutoff,
// then the directories below the workspace that are empty and either were
// old themselves or were emptied by this pass (a directory someone made
// empty on purpose today stays). Symlinks are never followed.
func pruneWorkspaces(ctx context.Context, root string, cutoff time.Time) (files, dirs int, err error) {
	users, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, u := range users {
		if !u.IsDir() || ctx.Err() != nil {
			continue
		}
		ws := filepath.Join(root, u.Name())
		type dir struct {
			path string
			old  bool
		}
		var below []dir
		touched := map[string]bool{}
		walkErr := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			info, err := d.Info() // Lstat: a symlink's own time
			if err != nil {
				return nil
			}
			old := info.ModTime().Before(cutoff)
			if d.IsDir() {
				if p != ws {
					below = append(below, dir{p, old})
				}
				return nil
			}
			if !old {
				return nil
			}
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
				return nil
			}
			files++
			touched[filepath.Dir(p)] = true
			return nil
		})
		if walkErr != nil {
			errs = append(errs, walkErr)
		}
		// Deepest first, so a parent sees its children gone; a directory
		// that still holds anything stays (os.Remove refuses it).
		slices.Reverse(below)
		for _, d := range below {
			if (d.old || touched[d.path]) && os.Remove(d.path) == nil {
				dirs++
				touched[filepath.Dir(d.path)] = true
			}
		}
	}
	return files, dirs, errors.Join(errs...)
}
