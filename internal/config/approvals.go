package config

import (
	"path"
	"time"
)

// Approvals says which tool calls wait for a person's decision (see
// docs/http.md#approvals).
type Approvals struct {
	// Tools always ask, read-only or not: canonical names or globs
	// ("execute_command", "*@*").
	Tools []string `yaml:"tools"`
	// AllTools: every tool that changes things asks.
	AllTools bool `yaml:"all_tools"`
	// Mode is the approval mode of requests that do not choose one:
	// suggest, auto_edit or full_auto. Default full_auto.
	Mode string `yaml:"mode"`
	// TimeoutS decides an approval nobody decided after this many
	// seconds; 0 means never. Default 3600.
	TimeoutS int `yaml:"timeout_s"`
	// OnTimeout is the decision then: reject or cancel. Default reject.
	OnTimeout string `yaml:"on_timeout"`
}

func approvalDefaults() Approvals {
	return Approvals{Mode: "full_auto", TimeoutS: 3600, OnTimeout: "reject"}
}

// Timeout is timeout_s as the orchestrator takes it (negative: never).
func (a Approvals) Timeout() time.Duration {
	if a.TimeoutS == 0 {
		return -1
	}
	return time.Duration(a.TimeoutS) * time.Second
}

func (c *Config) validateApprovals(v checker) {
	a := c.Approvals
	for i, p := range a.Tools {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			v.fail(indexPath("approvals.tools", i), "must be a tool name or a glob, got %s", quoteShort(p))
		}
	}
	v.oneOf("approvals.mode", a.Mode, []string{"suggest", "auto_edit", "full_auto"})
	atLeast(v, "approvals.timeout_s", a.TimeoutS, 0)
	v.oneOf("approvals.on_timeout", a.OnTimeout, []string{"reject", "cancel"})
}
