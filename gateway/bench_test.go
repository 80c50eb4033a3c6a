package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// BenchmarkWunderBlocking measures POST /wunder with stream: false (the
// blocking JSON answer) over HTTP, four clients per GOMAXPROCS at once,
// each run a new user's: the front-end's wait for the final event, on
// top of the core's run (scripted model, in-memory store).
//
//	go test -run '^$' -bench WunderBlocking -count 5 ./gateway/
func BenchmarkWunderBlocking(b *testing.B) {
	e := newEnv(b, envOpts{turns: []orchestratortest.Turn{{Content: "pong"}}, orch: orchestrator.Options{MaxActiveRuns: 64, QueueSize: 1024}})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := fmt.Sprintf(`{"user_id":"u%d","question":"ping","stream":false}`, n.Add(1))
			resp, err := hc.Post(e.srv.URL+"/wunder", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			var out struct {
				State  string `json:"state"`
				Answer string `json:"answer"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || out.State != string(orchestrator.RunFinished) {
				b.Errorf("POST /wunder: %d %+v %v", resp.StatusCode, out, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}
