// Command sseload drives POST /wunder in a closed loop, as the shared
// harness's load driver does for JSON, but with "stream": true: each of -c
// workers (user u<worker>, so each person's one run slot is respected)
// asks -text, reads the server-sent events to the final one and counts the
// run when its answer contains -expect. It prints one JSON line (ok,
// errors, rps, p50/p95/p99 in ms), the driver's shape, so
// scripts/bench-http.sh sets it beside A2A and POST /wunder JSON.
package main

import (
	"bufio"
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
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8000", "wunder's root URL")
	c := flag.Int("c", 8, "concurrent workers")
	n := flag.Int("n", 4000, "runs in all")
	text := flag.String("text", "#say hello", "the question")
	expect := flag.String("expect", "hello", "what the final answer must contain")
	flag.Parse()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *c + 4}, Timeout: time.Minute}
	var next, errs atomic.Int64
	lat := make([][]time.Duration, *c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range *c {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"user_id": "u" + strconv.Itoa(w), "question": *text, "stream": true})
			for next.Add(1) <= int64(*n) {
				t0 := time.Now()
				if err := run(client, *url+"/wunder", body, *expect); err != nil {
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
	out, _ := json.Marshal(map[string]any{"mode": "wunder-sse", "url": *url, "c": *c, "ok": len(all), "errors": errs.Load(),
		"seconds": secs, "rps": float64(len(all)) / secs, "p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99)})
	fmt.Println(string(out))
	if errs.Load() > 0 {
		os.Exit(1)
	}
}

// run posts one question and reads its stream to the final event.
func run(client *http.Client, url string, body []byte, expect string) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:") && (event == "final" || event == "error"):
			data := strings.TrimPrefix(line, "data:")
			if event == "error" || !strings.Contains(data, expect) {
				return fmt.Errorf("%s event: %.200s", event, data)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			return nil
		case line == "":
			event = ""
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the stream ended without a final event")
}
