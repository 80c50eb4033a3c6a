package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// BenchmarkPassThrough measures tools/call through /wunder/mcp/{server}
// against the same go-sdk backend called directly, with benchClients
// concurrent client sessions, in one run: it reports both p99 latencies and
// the overhead ratio of the mean latencies (gateway / direct).
//
//	go test -run '^$' -bench PassThrough -benchtime 20x ./mcpserver/
func BenchmarkPassThrough(b *testing.B) {
	const benchClients, callsPerClient = 8, 25
	backend := mcp.NewServer(&mcp.Implementation{Name: "backend", Version: "1"}, nil)
	mcp.AddTool(backend, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	direct := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return backend }, nil))
	b.Cleanup(direct.Close)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "b", Transport: mcptools.TransportStreamableHTTP, URL: direct.URL}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	e := newEnv(b, mcpserver.Options{Upstreams: set}, orchestratortest.Turn{Content: "ok"})
	b.Cleanup(func() { _ = set.Close() })

	sessions := func(url string) []*mcp.ClientSession {
		out := make([]*mcp.ClientSession, benchClients)
		for i := range out {
			out[i] = connect(b, url, nil, nil)
		}
		return out
	}
	directS, gatewayS := sessions(direct.URL), sessions(e.url+"/wunder/mcp/b")
	run := func(ss []*mcp.ClientSession) []time.Duration {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		for _, cs := range ss {
			wg.Go(func() {
				for range callsPerClient {
					start := time.Now()
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
					d := time.Since(start)
					if err != nil || res.IsError {
						b.Errorf("call: %v %+v", err, res)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return lat
	}
	var dl, gl []time.Duration
	b.ResetTimer()
	for range b.N {
		dl = append(dl, run(directS)...)
		gl = append(gl, run(gatewayS)...)
	}
	b.StopTimer()
	dMean, dP99 := stats(dl)
	gMean, gP99 := stats(gl)
	b.ReportMetric(float64(dP99.Microseconds()), "direct-p99-µs")
	b.ReportMetric(float64(gP99.Microseconds()), "gateway-p99-µs")
	b.ReportMetric(float64(gMean)/float64(dMean), "overhead-ratio")
	b.Logf("%d clients: direct mean %s p99 %s; gateway mean %s p99 %s; ratio %.2f",
		benchClients, dMean, dP99, gMean, gP99, float64(gMean)/float64(dMean))
}

func stats(l []time.Duration) (mean, p99 time.Duration) {
	if len(l) == 0 {
		return 0, 0
	}
	slices.Sort(l)
	var sum time.Duration
	for _, d := range l {
		sum += d
	}
	return sum / time.Duration(len(l)), l[(len(l)*99)/100]
}
