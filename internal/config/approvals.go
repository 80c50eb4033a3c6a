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

// Questions is how long the model's questions to the user (the ask_user
// tool) wait, and what happens when nobody answers.
type Questions struct {
	// TimeoutS ends the wait after this many seconds; 0 means never.
	// Default 3600.
	TimeoutS int `yaml:"timeout_s"`
	// OnTimeout is what happens then: default (the question's default
	// answer, else DefaultAnswer; a question with neither fails the run)
	// or fail. Default default.
	OnTimeout string `yaml:"on_timeout"`
	// DefaultAnswer answers a question that has no default of its own,
	// when it fits the question (one of its options, or any text for an
	// open question). Default "" (none).
	DefaultAnswer string `yaml:"default_answer"`
}

func questionDefaults() Questions {
	return Questions{TimeoutS: 3600, OnTimeout: "default"}
}

// Timeout is timeout_s as the orchestrator takes it (negative: never).
func (q Questions) Timeout() time.Duration {
	if q.TimeoutS == 0 {
		return -1
	}
	return time.Duration(q.TimeoutS) * time.Second
}

func (c *Config) validateQuestions(v checker) {
	q := c.Questions
	atLeast(v, "questions.timeout_s", q.TimeoutS, 0)
	v.oneOf("questions.on_timeout", q.OnTimeout, []string{"default", "fail"})
	if len(q.DefaultAnswer) > 4000 {
		v.fail("questions.default_answer", "must be at most 4000 bytes, got %d", len(q.DefaultAnswer))
	}
}
