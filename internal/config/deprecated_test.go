package config_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// Every key of "Keys of the original wunder" (docs/configuration.md)
// still loads into its new place, with one warning naming the file and
// line, the old key and the new one.
func TestEveryRenamedKeyLoads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml, old, new string
		line           int
		got            func(*config.Config) any
		want           any
	}{
		{"server:\n  max_active_sessions: 7\n", "server.max_active_sessions", "concurrency.max_active_runs", 2,
			func(c *config.Config) any { return c.Concurrency.MaxActiveRuns }, 7},
		{"llm:\n  models:\n    gpt:\n      model: m\n      enable: false\n", "llm.models.gpt.enable", "llm.models.gpt.enabled", 5,
			func(c *config.Config) any { return c.LLM.Models["gpt"].Enabled }, false},
		{"observability:\n  monitor_payload_max_chars: 500\n", "observability.monitor_payload_max_chars", "observability.event_payload_max_chars", 2,
			func(c *config.Config) any { return c.Observability.EventPayloadMaxChars }, 500},
		{"observability:\n  monitor_drop_event_types: [progress]\n", "observability.monitor_drop_event_types", "observability.drop_event_types", 2,
			func(c *config.Config) any { return strings.Join(c.Observability.DropEventTypes, ",") }, "progress"},
		{"observability:\n  blocking_event_delay_ms: 7\n", "observability.blocking_event_delay_ms", "tuning.blocking_event_delay_ms", 2,
			func(c *config.Config) any { return *c.Tuning.BlockingEventDelayMS }, 7},
		{"observability:\n  stream_event_delay_ms: 0\n", "observability.stream_event_delay_ms", "tuning.stream_event_delay_ms", 2,
			func(c *config.Config) any { return *c.Tuning.StreamEventDelayMS }, 0},
		{"observability:\n  tool_log_delay_ms: 9\n", "observability.tool_log_delay_ms", "tuning.tool_log_delay_ms", 2,
			func(c *config.Config) any { return *c.Tuning.ToolLogDelayMS }, 9},
		{"server:\n  gc_min_heap_mb: 128\n", "server.gc_min_heap_mb", "tuning.gc_min_heap_mb", 2,
			func(c *config.Config) any { return c.Tuning.GCMinHeap() }, 128},
	}
	for _, tt := range tests {
		t.Run(tt.old, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, files{basePath: tt.yaml}, nil)
			if got := tt.got(c); got != tt.want {
				t.Errorf("%s = %v, want %v", tt.new, got, tt.want)
			}
			want := []string{fmt.Sprintf("%s:%d: %s is deprecated; use %s", basePath, tt.line, tt.old, tt.new)}
			if w := c.Warnings(); !slices.Equal(w, want) {
				t.Errorf("Warnings() = %q, want %q", w, want)
			}
		})
	}
}

// A deprecated key with a bad value is reported under its new name, at
// the line where the old one was written.
func TestRenamedKeyErrorsPointAtTheOldKey(t *testing.T) {
	t.Parallel()
	got := loadErr(t, "server:\n  port: 8000\n  max_active_sessions: 0\n")
	if want := "config/wunder.yaml:3: concurrency.max_active_runs: must be at least 1, got 0"; got != want {
		t.Errorf("error =\n%s\nwant\n%s", got, want)
	}
}

// Both spellings in one file is an error naming both, for the keys under
// a model name too; a new key's parent that is not a mapping cannot take
// the old key's value.
func TestRenamedKeyConflicts(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"both under a model", "llm:\n  models:\n    gpt:\n      model: m\n      enabled: true\n      enable: false\n",
			"config/wunder.yaml:6: llm.models.gpt.enable: deprecated spelling of llm.models.gpt.enabled, which is also set: remove llm.models.gpt.enable"},
		{"both tuning", "tuning:\n  tool_log_delay_ms: 1\nobservability:\n  tool_log_delay_ms: 2\n",
			"config/wunder.yaml:4: observability.tool_log_delay_ms: deprecated spelling of tuning.tool_log_delay_ms, which is also set: remove observability.tool_log_delay_ms"},
		{"new parent is a scalar", "concurrency: 5\nserver:\n  max_active_sessions: 7\n",
			"config/wunder.yaml:3: server.max_active_sessions: deprecated spelling of concurrency.max_active_runs, which cannot be set here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.yaml); !strings.Contains(got, tt.want) {
				t.Errorf("error =\n%s\nwant it to contain\n%s", got, tt.want)
			}
		})
	}
}

// Renames apply per file: the override may use the old spelling over a
// base that uses the new one (the override wins), and the warning names
// the override file; every model's old key is renamed.
func TestRenamedKeysAcrossFilesAndModels(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{
		basePath: "llm:\n  default: b\n  models:\n    a: {model: a, enable: false}\n    b: {model: b, enable: true}\n    c: {model: c}\n" +
			"observability:\n  event_payload_max_chars: 10\n",
		overridePath: "observability:\n  monitor_payload_max_chars: 20\n",
	}, nil)
	if c.Observability.EventPayloadMaxChars != 20 {
		t.Errorf("event_payload_max_chars = %d, want the override's 20", c.Observability.EventPayloadMaxChars)
	}
	if got := c.EnabledModelNames(); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("enabled models = %q, want b and c", got)
	}
	w := strings.Join(c.Warnings(), "\n")
	for _, want := range []string{
		"llm.models.a.enable is deprecated", "llm.models.b.enable is deprecated",
		overridePath + ":2: observability.monitor_payload_max_chars is deprecated; use observability.event_payload_max_chars",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("Warnings() =\n%s\nwant %q", w, want)
		}
	}
	if strings.Contains(w, "models.c") {
		t.Errorf("a model without the old key got a warning:\n%s", w)
	}
}
