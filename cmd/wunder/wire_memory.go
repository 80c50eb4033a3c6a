package main

import (
	"log/slog"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// newMemory wires long-term memory (docs/memory.md): the store keeps it
// (storage.Store), it reads the sessions of the same store and summarises
// with the configured models. The core gets it as Options.Memory, the
// gateway as its memory routes; app.close closes it after the core. Off
// (memory.enabled false), its routes answer 503 and runs have no memory.
func newMemory(cfg *config.Config, store *storage.Store, models orchestrator.Models, log *slog.Logger) *memory.Memory {
	m := cfg.Memory
	return memory.New(store, store, models, &memory.Options{
		Enabled: m.Enabled, MaxRecords: m.MaxRecords, QueueSize: m.QueueSize, Workers: m.Workers,
		Model: m.Model, Timeout: m.Timeout(), PromptMaxTokens: m.PromptMaxTokens,
		MaxHistoryItems: cfg.Workspace.MaxHistoryItems, // as the core reads a session
		Logger:          log,
	})
}
