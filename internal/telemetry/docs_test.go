package telemetry_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/telemetry"
	"github.com/wunder/wunder/orchestrator"
)

// docSeries matches a row of the metrics table of docs/observability.md:
// | `name` | type | `label`, `label` | what |
var docSeries = regexp.MustCompile("^\\| `(wunder_[a-z0-9_]+)` \\| ([a-z]+) \\|([^|]*)\\|")

// Metric names, types and labels are a contract (dashboards and alerts
// are written against them): every wunder_* family /metrics exposes is in
// the table of docs/observability.md with that type and exactly those
// labels, and every series of the table is exposed.
func TestMetricsMatchTheDocumentedContract(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		typ    string
		labels []string
	}
	documented := map[string]row{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := docSeries.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var labels []string
		for _, l := range strings.Split(m[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
		documented[m[1]] = row{m[2], labels}
	}
	if len(documented) < 10 {
		t.Fatalf("found %d series in the table of docs/observability.md; has its shape changed?", len(documented))
	}

	// Make every series have a sample.
	tel := newTel(t, 10)
	tel.SetGauges(telemetry.Gauges{
		QueueDepth: func() float64 { return 1 }, ActiveRuns: func() float64 { return 1 }, OpenStreams: func() float64 { return 1 },
	})
	ctx, endRun := tel.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_1", UserID: "alice", Frontend: orchestrator.FrontendREST})
	tel.FirstOutput(ctx, orchestrator.RunInfo{ID: "run_1"}, 20*time.Millisecond)
	_, endModel := tel.ModelCall(ctx, orchestrator.ModelCallInfo{RunID: "run_1", Model: "gpt"})
	endModel(orchestrator.ModelCallEnd{Response: &orchestrator.ModelResponse{Usage: &orchestrator.Usage{InputTokens: 1, OutputTokens: 1}}})
	_, endTool := tel.ToolCall(ctx, orchestrator.ToolCallInfo{RunID: "run_1", Tool: "write_file"})
	endTool(orchestrator.ToolCallEnd{})
	tel.ToolDecision(&orchestrator.ToolLog{UserID: "alice", Outcome: orchestrator.OutcomeAllowed, Via: orchestrator.ViaRun, FrontEnd: orchestrator.FrontendREST})
	tel.StoreOp(ctx, "write", time.Now(), nil)
	endRun(orchestrator.RunEnd{State: orchestrator.RunFinished, Usage: orchestrator.Usage{InputTokens: 1, OutputTokens: 1}})

	m := scrape(t, tel)
	for name, typ := range m.types {
		if !strings.HasPrefix(name, "wunder_") {
			continue
		}
		d, ok := documented[name]
		if !ok {
			t.Errorf("%s (%s) is exposed but not in the table of docs/observability.md", name, typ)
			continue
		}
		if d.typ != typ {
			t.Errorf("%s is a %s; the docs say %s", name, typ, d.typ)
		}
		sampleName := name
		if typ == "histogram" {
			sampleName = name + "_count"
		}
		var labels []string
		for _, s := range m.samples[sampleName] {
			for l := range s.labels {
				if !slices.Contains(labels, l) {
					labels = append(labels, l)
				}
			}
		}
		slices.Sort(labels)
		if !slices.Equal(labels, d.labels) {
			t.Errorf("%s has labels %q; the docs say %q", name, labels, d.labels)
		}
	}
	for name := range documented {
		if _, ok := m.types[name]; !ok {
			t.Errorf("docs/observability.md lists %s, which /metrics does not expose", name)
		}
	}
	// The Go and process collectors are part of the registry too.
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := m.types[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
}
