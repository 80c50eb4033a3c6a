package main

import (
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// memoryOptions maps the memory section to the orchestrator's long-term
// memory (docs/memory.md); the store (storage.Store) keeps it.
func memoryOptions(m config.Memory) orchestrator.MemoryOptions {
	return orchestrator.MemoryOptions{
		Enabled: m.Enabled, MaxRecords: m.MaxRecords, QueueSize: m.QueueSize, Workers: m.Workers,
		Model: m.Model, Timeout: m.Timeout(), PromptMaxTokens: m.PromptMaxTokens,
	}
}
