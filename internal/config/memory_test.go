package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
)

func TestMemoryDefaultsAndSection(t *testing.T) {
	t.Parallel()
	d := config.Default().Memory
	if !d.Enabled || d.MaxRecords != 30 || d.QueueSize != 256 || d.Workers != 1 || d.Model != "" || d.Timeout() != 120*time.Second || d.PromptMaxTokens != 2000 {
		t.Errorf("memory defaults = %+v", d)
	}
	c := mustLoad(t, files{basePath: "memory:\n  enabled: false\n  max_records: 5\n  workers: 2\n  timeout_s: 9\n  prompt_max_tokens: 100\n"}, nil)
	if m := c.Memory; m.Enabled || m.MaxRecords != 5 || m.Workers != 2 || m.Timeout() != 9*time.Second || m.PromptMaxTokens != 100 || m.QueueSize != 256 {
		t.Errorf("memory = %+v", m)
	}
}

func TestMemoryBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"max records", "memory:\n  max_records: 0\n", "memory.max_records: must be between 1 and 1000"},
		{"queue", "memory:\n  queue_size: 0\n", "memory.queue_size: must be between 1 and 1000000"},
		{"workers", "memory:\n  workers: 65\n", "memory.workers: must be between 1 and 64"},
		{"timeout", "memory:\n  timeout_s: 0\n", "memory.timeout_s: must be at least 1"},
		{"budget", "memory:\n  prompt_max_tokens: 0\n", "memory.prompt_max_tokens: must be at least 1"},
		{"model", "memory:\n  model: nope\n", "memory.model: must name an entry of llm.models"},
		{"unknown key", "memory:\n  max_record: 3\n", "memory.max_record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.yaml); !strings.Contains(got, tt.want) {
				t.Errorf("error =\n%s\nwant it to contain %q", got, tt.want)
			}
		})
	}
}
