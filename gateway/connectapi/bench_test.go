package connectapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// BenchmarkRunStream compares a streamed run over the Connect API (Connect
// protocol over HTTP/1.1 and over h2c, gRPC over h2c) with the same run over /wunder SSE,
// same server, same scripted model: one op is one whole run, from the
// request to the final event. It reports time to first event and runs/s.
//
//	go test -run '^$' -bench RunStream -benchtime 2s ./gateway/connectapi/
func BenchmarkRunStream(b *testing.B) {
	e := newEnv(b, envOpts{turns: []ot.Turn{{Content: "the answer, streamed by the scripted model in a few deltas"}}})
	const question = "benchmark question"
	measure := func(b *testing.B, run func(user string) (first time.Duration)) {
		var firstTotal time.Duration
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			firstTotal += run(fmt.Sprintf("%s-%d", strings.ReplaceAll(b.Name(), "/", "."), i))
		}
		elapsed := time.Since(start)
		b.ReportMetric(float64(firstTotal.Microseconds())/float64(b.N), "µs/first-event")
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "runs/s")
	}
	b.Run("sse", func(b *testing.B) {
		hc := e.httpClient(false)
		body := `{"user_id":%q,"question":%q}`
		measure(b, func(user string) time.Duration {
			t0 := time.Now()
			resp, err := hc.Post(e.srv.URL+"/wunder", "application/json", strings.NewReader(fmt.Sprintf(body, user, question)))
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				raw, _ := io.ReadAll(resp.Body)
				b.Fatalf("%d %s", resp.StatusCode, raw)
			}
			var first time.Duration
			sc := bufio.NewScanner(resp.Body)
			final := false
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "data: ") && first == 0 {
					first = time.Since(t0)
				}
				if line == "event: final" {
					final = true
				}
			}
			if !final {
				b.Fatal("no final event")
			}
			return first
		})
	})
	for _, p := range []protocol{protocols[0], {name: "connect-h2c", h2c: true}, protocols[1]} {
		b.Run(p.name, func(b *testing.B) {
			c := e.clients(p)
			measure(b, func(user string) time.Duration {
				t0 := time.Now()
				s, err := c.runs.Run(b.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: user, Question: question}))
				if err != nil {
					b.Fatal(err)
				}
				var first time.Duration
				var last *wunderv1.Event
				for s.Receive() {
					if first == 0 {
						first = time.Since(t0)
					}
					last = s.Msg().GetEvent()
				}
				if s.Err() != nil || last.GetType() != "final" {
					b.Fatalf("stream: %v, last %v", s.Err(), last)
				}
				return first
			})
		})
	}
}
