package config

// Replan configures replanning (WINS Agent's): when one tool fails
// max_retries times in a row, the model is asked to update its plan and
// choose a strategy (see docs/http.md#plans).
type Replan struct {
	// Enabled turns replanning on. Default false.
	Enabled bool `yaml:"enabled"`
	// MaxRetries is the streak of failures of one tool that asks for a
	// replan, >= 1. Default 3.
	MaxRetries int `yaml:"max_retries"`
	// MaxReplans bounds the replans of one run, >= 1. Default 3.
	MaxReplans int `yaml:"max_replans"`
}

// GoalCheck configures the goal check: after the plan marks a step
// completed, the model is asked whether the goal is already met.
type GoalCheck struct {
	// Enabled turns the check on. Default false.
	Enabled bool `yaml:"enabled"`
}

func replanDefaults() Replan { return Replan{MaxRetries: 3, MaxReplans: 3} }

func (c *Config) validatePlanning(v checker) {
	atLeast(v, "replan.max_retries", c.Replan.MaxRetries, 1)
	atLeast(v, "replan.max_replans", c.Replan.MaxReplans, 1)
}
