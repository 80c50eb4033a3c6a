// Command sseload drives a streaming run in a closed loop, as the shared
// harness's load driver does for blocking ones: each of -c workers asks
// -text, reads the server-sent events to the end and counts the run when
// its answer contains -expect. It prints one JSON line (ok, errors, rps,
// p50/p95/p99 in ms), the driver's shape, so scripts/bench-http.sh sets it
// beside A2A's SendMessage and POST /wunder JSON.
//
// By default it posts to POST /wunder with "stream": true (user
// u<worker>, so each person's one run slot is respected); with -a2a it
// sends A2A 1.0 SendStreamingMessage to {url}/a2a and reads the stream to
// the task's terminal status.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/internal/sse"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8000", "wunder's root URL")
	c := flag.Int("c", 8, "concurrent workers")
	n := flag.Int("n", 4000, "runs in all")
	text := flag.String("text", "#say hello", "the question")
	expect := flag.String("expect", "hello", "what the final answer must contain")
	a2a := flag.Bool("a2a", false, "send A2A 1.0 SendStreamingMessage to {url}/a2a instead of POST /wunder")
	flag.Parse()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *c + 4}, Timeout: time.Minute}
	var next, errs atomic.Int64
	lat := make([][]time.Duration, *c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range *c {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"user_id": "u" + strconv.Itoa(w), "question": *text, "stream": true})
			for i := next.Add(1); i <= int64(*n); i = next.Add(1) {
				t0 := time.Now()
				var err error
				if *a2a {
					err = runA2A(client, *url+"/a2a", *text, "m"+strconv.FormatInt(i, 10), *expect)
				} else {
					err = run(client, *url+"/wunder", body, *expect)
				}
				if err != nil {
					if errs.Add(1) <= 3 {
						log.Printf("worker %d: %v", w, err)
					}
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	mode := "wunder-sse"
	if *a2a {
		mode = "a2a10-stream"
	}
	out, _ := json.Marshal(map[string]any{"mode": mode, "url": *url, "c": *c, "ok": len(all), "errors": errs.Load(),
		"seconds": secs, "rps": float64(len(all)) / secs, "p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99)})
	fmt.Println(string(out))
	if errs.Load() > 0 {
		os.Exit(1)
	}
}

// open sends req and returns its event stream's body, or why not.
func open(client *http.Client, req *http.Request) (io.ReadCloser, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return resp.Body, nil
}

// run posts one question and reads its stream to the final event.
func run(client *http.Client, url string, body []byte, expect string) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	rc, err := open(client, req)
	if err != nil {
		return err
	}
	defer rc.Close()
	for ev, err := range sse.Read(rc) {
		if err != nil {
			return err
		}
		if ev.Type != "final" && ev.Type != "error" {
			continue
		}
		if ev.Type == "error" || !bytes.Contains(ev.Data, []byte(expect)) {
			return fmt.Errorf("%s event: %.200s", ev.Type, ev.Data)
		}
		_, _ = io.Copy(io.Discard, rc)
		return nil
	}
	return fmt.Errorf("the stream ended without a final event")
}

// runA2A sends one A2A 1.0 SendStreamingMessage and reads its stream to the
// end: the answer must contain expect and the last status must be
// completed.
func runA2A(client *http.Client, url, text, id, expect string) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "SendStreamingMessage",
		"params": map[string]any{"message": map[string]any{"messageId": id, "role": "ROLE_USER",
			"parts": []any{map[string]any{"text": text}}}}})
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", sse.ContentType)
	req.Header.Set("A2A-Version", "1.0")
	rc, err := open(client, req)
	if err != nil {
		return err
	}
	defer rc.Close()
	answered, completed := false, false
	for ev, err := range sse.Read(rc) {
		if err != nil {
			return err
		}
		var rpc struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(ev.Data, &rpc); err != nil {
			return fmt.Errorf("bad JSON-RPC event: %v: %.200s", err, ev.Data)
		}
		if len(rpc.Error) > 0 && string(rpc.Error) != "null" {
			return fmt.Errorf("JSON-RPC error: %.200s", rpc.Error)
		}
		answered = answered || strings.Contains(string(rpc.Result), expect)
		completed = strings.Contains(string(rpc.Result), "TASK_STATE_COMPLETED")
	}
	if !answered || !completed {
		return fmt.Errorf("the stream ended without a completed task whose answer has %q", expect)
	}
	return nil
}
