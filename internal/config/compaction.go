package config

import "time"

// Compaction configures how an over-long conversation is compacted before
// a model call (docs/llm.md, "Context compaction"). The triggers are per
// model: llm.models.<name>.max_context, history_compaction_ratio and
// history_compaction_reset.
type Compaction struct {
	// KeepTailTokens is about how much recent history before the run's
	// question is kept verbatim when the rest is summarised. Default 2000;
	// 0 = none.
	KeepTailTokens int `yaml:"keep_tail_tokens"`
	// SummaryMaxTokens caps the summary (the summary call's max output and
	// a clip of its answer). Default 1024.
	SummaryMaxTokens int `yaml:"summary_max_tokens"`
	// SummaryTimeoutSeconds (summary_timeout_s) bounds the summary call;
	// past it a placeholder stands in (strategy fallback). Default 60.
	SummaryTimeoutSeconds int `yaml:"summary_timeout_s"`
	// SafetyMarginTokens is kept free in the safe budget
	// min(0.9 × max_context, max_context − max_output − margin). Default
	// 1024.
	SafetyMarginTokens int `yaml:"safety_margin_tokens"`
}

func compactionDefaults() Compaction {
	return Compaction{KeepTailTokens: 2000, SummaryMaxTokens: 1024, SummaryTimeoutSeconds: 60, SafetyMarginTokens: 1024}
}

// SummaryTimeout is summary_timeout_s as a duration.
func (c Compaction) SummaryTimeout() time.Duration { return seconds(c.SummaryTimeoutSeconds) }

// History usage resets (llm.models.<name>.history_compaction_reset).
const (
	ResetZero    = "zero"
	ResetCurrent = "current"
	ResetKeep    = "keep"
)

func (c *Config) validateCompaction(v checker) {
	k := c.Compaction
	atLeast(v, "compaction.keep_tail_tokens", k.KeepTailTokens, 0)
	atLeast(v, "compaction.summary_max_tokens", k.SummaryMaxTokens, 64)
	atLeast(v, "compaction.summary_timeout_s", k.SummaryTimeoutSeconds, 1)
	atLeast(v, "compaction.safety_margin_tokens", k.SafetyMarginTokens, 0)
}
