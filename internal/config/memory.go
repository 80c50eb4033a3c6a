package config

import "time"

// Memory configures per-user long-term memory (docs/memory.md): after a
// run of a user who turned memory on ends finished, its session is
// summarised by a model in the background and the summary is put into the
// system prompt of the user's later runs.
type Memory struct {
	// Enabled is the global switch. Default true: memory stays off for
	// every user until the user (PUT /wunder/memory/enabled) or an admin
	// turns it on, so the switch costs nothing while nobody uses it.
	// false: no summaries are made or injected and the memory routes
	// answer 503.
	Enabled bool `yaml:"enabled"`
	// MaxRecords bounds a user's records; the oldest goes first. Default 30.
	MaxRecords int `yaml:"max_records"`
	// QueueSize bounds the summarisation tasks waiting in the store; a
	// task beyond it fails at once with "queue full". Default 256.
	QueueSize int `yaml:"queue_size"`
	// Workers is how many summaries this process makes at once. Default 1.
	Workers int `yaml:"workers"`
	// Model names the llm.models entry that summarises; "" = the default
	// model.
	Model string `yaml:"model"`
	// TimeoutSeconds (timeout_s) bounds one summarisation call. Default 120.
	TimeoutSeconds int `yaml:"timeout_s"`
	// PromptMaxTokens bounds the [Long-term Memory] block of the system
	// prompt (estimated tokens); the newest records come first. Default
	// 2000.
	PromptMaxTokens int `yaml:"prompt_max_tokens"`
}

func memoryDefaults() Memory {
	return Memory{Enabled: true, MaxRecords: 30, QueueSize: 256, Workers: 1, TimeoutSeconds: 120, PromptMaxTokens: 2000}
}

// Timeout is timeout_s as a duration.
func (m Memory) Timeout() time.Duration { return seconds(m.TimeoutSeconds) }

func (c *Config) validateMemory(v checker) {
	m := c.Memory
	v.between("memory.max_records", m.MaxRecords, 1, 1000)
	v.between("memory.queue_size", m.QueueSize, 1, 1_000_000)
	v.between("memory.workers", m.Workers, 1, 64)
	atLeast(v, "memory.timeout_s", m.TimeoutSeconds, 1)
	atLeast(v, "memory.prompt_max_tokens", m.PromptMaxTokens, 1)
	if m.Model != "" {
		if _, ok := c.LLM.Models[m.Model]; !ok {
			v.fail("memory.model", "must name an entry of llm.models, got %s", quoteShort(m.Model))
		}
	}
}
