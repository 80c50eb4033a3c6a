package config

// Evaluation configures capability evaluation (/wunder/admin/evaluation):
// a case set run against a model, each case in a workspace of its own.
type Evaluation struct {
	// CasesDir is the directory of case files (*.yaml). Default
	// "eval/cases"; when it does not exist, the starter set embedded in the
	// binary is used.
	CasesDir string `yaml:"cases_dir"`
	// CaseTimeoutSeconds (case_timeout_s) bounds one case's run, >= 1.
	// Default 300.
	CaseTimeoutSeconds int `yaml:"case_timeout_s"`
	// JudgeModel names the llm.models entry that grades `judge` checks;
	// "" = the model under evaluation.
	JudgeModel string `yaml:"judge_model"`
}

// Throughput bounds the load tests an admin starts
// (/wunder/admin/throughput): the server against itself.
type Throughput struct {
	// MaxConcurrency is the highest step of a concurrency ladder, >= 1.
	// Default 64.
	MaxConcurrency int `yaml:"max_concurrency"`
	// MaxDurationSeconds (max_duration_s) bounds a whole load test, >= 1;
	// it is stopped when it runs longer. Default 600.
	MaxDurationSeconds int `yaml:"max_duration_s"`
	// MaxRunsPerStep bounds runs_per_step, >= 1. Default 10000.
	MaxRunsPerStep int `yaml:"max_runs_per_step"`
	// RequestTimeoutSeconds (request_timeout_s) bounds one run of a load
	// test, >= 1. Default 120.
	RequestTimeoutSeconds int `yaml:"request_timeout_s"`
}

func evaluationDefaults() Evaluation {
	return Evaluation{CasesDir: "eval/cases", CaseTimeoutSeconds: 300}
}

func throughputDefaults() Throughput {
	return Throughput{MaxConcurrency: 64, MaxDurationSeconds: 600, MaxRunsPerStep: 10000, RequestTimeoutSeconds: 120}
}

func (c *Config) validateEvaluation(v checker) {
	if c.Evaluation.CasesDir == "" {
		v.fail("evaluation.cases_dir", "must not be empty")
	}
	atLeast(v, "evaluation.case_timeout_s", c.Evaluation.CaseTimeoutSeconds, 1)
	if m := c.Evaluation.JudgeModel; m != "" {
		if _, ok := c.LLM.Models[m]; !ok {
			v.fail("evaluation.judge_model", "must name an llm.models entry, got %s", quoteShort(m))
		}
	}
	atLeast(v, "throughput.max_concurrency", c.Throughput.MaxConcurrency, 1)
	atLeast(v, "throughput.max_duration_s", c.Throughput.MaxDurationSeconds, 1)
	atLeast(v, "throughput.max_runs_per_step", c.Throughput.MaxRunsPerStep, 1)
	atLeast(v, "throughput.request_timeout_s", c.Throughput.RequestTimeoutSeconds, 1)
}
