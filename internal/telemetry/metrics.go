package telemetry

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are wunder's series, on a registry of their own.
type metrics struct {
	reg *prometheus.Registry

	runs          *prometheus.CounterVec
	runDuration   prometheus.Histogram
	firstEvent    prometheus.Histogram
	modelCalls    *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	modelTokens   *prometheus.CounterVec
	toolCalls     *prometheus.CounterVec
	toolDuration  *prometheus.HistogramVec
	storeDuration *prometheus.HistogramVec

	// The audit's decisions, and each user's consumption (users.go).
	toolDecisions  *prometheus.CounterVec
	userRuns       *prometheus.CounterVec
	userRunSeconds *prometheus.CounterVec
	userTokens     *prometheus.CounterVec
	userToolCalls  *prometheus.CounterVec

	// Front-ends' own failures.
	a2aFileCleanupFailures prometheus.Counter
}

// Buckets, in seconds.
var (
	runBuckets   = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	callBuckets  = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}
	storeBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5}
)

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_runs_total",
		Help: "Runs ended on this instance, by terminal state and the front-end that started them."}, []string{"state", "frontend"})
	m.runDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "wunder_run_duration_seconds",
		Help: "Time from a run's admission (queue included) to its end; a resumed run counts its last execution.", Buckets: runBuckets})
	m.firstEvent = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "wunder_first_event_seconds",
		Help: "Time from a run's creation to the first output of its model (what a caller waits for).", Buckets: callBuckets})
	m.modelCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_model_calls_total",
		Help: "Model calls by configured model and outcome (ok, error, cancelled)."}, []string{"model", "outcome"})
	m.modelDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "wunder_model_call_duration_seconds",
		Help: "Model call latency, request to complete response.", Buckets: callBuckets}, []string{"model"})
	m.modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_model_tokens_total",
		Help: "Tokens reported by the model, by kind (input, output)."}, []string{"model", "kind"})
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_tool_calls_total",
		Help: "Tool calls by tool and outcome (ok, error, cancelled); a user's own tools are counted as user_tool."}, []string{"tool", "outcome"})
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "wunder_tool_call_duration_seconds",
		Help: "Tool call latency.", Buckets: callBuckets}, []string{"tool"})
	m.storeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "wunder_store_op_duration_seconds",
		Help: "Store operation latency by operation (select_runs, insert_events, ..., write).", Buckets: storeBuckets}, []string{"op"})
	m.toolDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_tool_decisions_total",
		Help: "Decisions of the policy on tool calls, as the audit records them: by outcome (allowed, denied, error), path (run, catalog, passthrough) and front-end."}, []string{"outcome", "via", "frontend"})
	m.userRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_user_runs_total",
		Help: "Runs ended on this instance, by user (past observability.metrics_max_users users, user=\"_other\")."}, []string{"user"})
	m.userRunSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_user_run_seconds_total",
		Help: "Execution time of runs on this instance (waits for approval excluded), by user."}, []string{"user"})
	m.userTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_user_tokens_total",
		Help: "Tokens of the runs that ended on this instance, by user and kind (input, output)."}, []string{"user", "kind"})
	m.userToolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wunder_user_tool_calls_total",
		Help: "Tool calls decided on this instance, by user and outcome (allowed, denied, error)."}, []string{"user", "outcome"})
	m.a2aFileCleanupFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "wunder_a2a_file_cleanup_failures_total",
		Help: "Folders of A2A messages whose task did not start that could not be removed from the caller's workspace (their files stay)."})
	m.reg.MustRegister(m.runs, m.runDuration, m.firstEvent, m.modelCalls, m.modelDuration, m.modelTokens,
		m.toolCalls, m.toolDuration, m.storeDuration,
		m.toolDecisions, m.userRuns, m.userRunSeconds, m.userTokens, m.userToolCalls, m.a2aFileCleanupFailures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Gauges are the values /metrics reads when it is scraped.
type Gauges struct {
	// QueueDepth is the runs waiting for a slot (wunder_queue_depth).
	QueueDepth func() float64
	// ActiveRuns is the runs holding a slot (wunder_active_runs).
	ActiveRuns func() float64
	// OpenStreams is the event streams open now (wunder_open_streams).
	OpenStreams func() float64
}

// SetGauges registers the gauges; call it once, when the components they
// read are built.
func (t *Telemetry) SetGauges(g Gauges) {
	for name, f := range map[string]struct {
		help string
		f    func() float64
	}{
		"wunder_queue_depth":  {"Runs waiting for a free slot on this instance.", g.QueueDepth},
		"wunder_active_runs":  {"Runs executing on this instance.", g.ActiveRuns},
		"wunder_open_streams": {"Event streams (SSE) open on this instance.", g.OpenStreams},
	} {
		if f.f != nil {
			t.m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: f.help}, f.f))
		}
	}
}

// A2AFileCleanupFailed counts a folder of an A2A message whose task did
// not start that stays in a workspace (a2a.FileOptions.CleanupFailed).
func (t *Telemetry) A2AFileCleanupFailed() { t.m.a2aFileCleanupFailures.Inc() }

// MetricsHandler serves the registry in the Prometheus text format
// (gateway mounts it at /metrics behind its authentication).
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.m.reg, promhttp.HandlerOpts{Registry: t.m.reg})
}
