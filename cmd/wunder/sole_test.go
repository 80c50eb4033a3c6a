package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// The first server on a SQLite database holds it alone, so a person's
// short run there is one write (docs/operations.md); a second one on the
// same file, as `wunder mcp stdio` beside a server, shares it and keeps
// its slots in the database; once the first stops, the next server holds
// it. Either way both answer.
func TestSQLiteServerHoldsItsDatabase(t *testing.T) {
	dir := dataDir(t)
	serve := func() (*server, func()) {
		modelSrv := httptest.NewServer(&fakellm.Server{Chunks: 2})
		t.Cleanup(modelSrv.Close)
		cfg := config.Default()
		cfg.DataDir = dir
		cfg.Sandbox.Mode = config.SandboxNone // no commands here
		m := config.NewModel()
		m.Provider, m.BaseURL, m.Model = config.ProviderLocal, modelSrv.URL+"/v1", "fake"
		cfg.LLM.Models = map[string]config.Model{"fake": m}
		return serveConfig(t, cfg)
	}
	ask := func(s *server, user string) {
		t.Helper()
		var out struct {
			Answer string `json:"answer"`
		}
		if code := postJSON(t, s.url+"/wunder", `{"user_id":"`+user+`","question":"hi","stream":false}`, &out); code != 200 ||
			!strings.Contains(out.Answer, "echo: hi") {
			t.Fatalf("POST /wunder as %s: %d %+v", user, code, out)
		}
	}
	a, stopA := serve()
	b, _ := serve()
	if !a.app.store.Sole() || b.app.store.Sole() {
		t.Fatalf("Sole() = %v for the first server, %v for the second; want the first alone", a.app.store.Sole(), b.app.store.Sole())
	}
	ask(a, "ann")
	ask(b, "ann")
	stopA()
	c, _ := serve()
	if !c.app.store.Sole() {
		t.Fatal("a server started after the holder stopped does not hold the database")
	}
	ask(c, "ann")
}

// On a server that holds its SQLite database, a person's blocking run
// holds the person's slot in memory until its start is stored: many
// blocking requests of one person at once get one run and 429 for the
// rest, over real HTTP; once the run ends, the person's next one runs.
func TestSQLitePersonsSlotUnderContention(t *testing.T) {
	s := startServer(t, nil)
	if !s.app.store.Sole() {
		t.Fatal("the test server does not hold its database")
	}
	const n = 12
	codes := make(chan int, n)
	for range n {
		go func() { // no t.Fatal off the test's goroutine: a failure is code 0
			resp, err := http.Post(s.url+"/wunder", "application/json", strings.NewReader(`{"user_id":"zed","question":"#hang","stream":false}`))
			if err != nil {
				codes <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	// Every request but the one admitted is answered at once; one that
	// hangs was admitted beside it.
	for i := range n - 1 {
		select {
		case code := <-codes:
			if code != 429 {
				t.Fatalf("a concurrent blocking run of zed answered %d; want 429 (one slot)", code)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d concurrent runs of zed were refused; the others run beside the first", i, n-1)
		}
	}
	// The admitted run is listed once its start is stored (its log's
	// first write), then cancelled: its request ends.
	var runID string
	waitFor(t, 10*time.Second, "the admitted run in zed's runs", func() bool {
		var list struct {
			Runs []struct {
				RunID string `json:"run_id"`
			} `json:"runs"`
		}
		res := s.rest(t, "GET", "/wunder/runs?user_id=zed", "", nil)
		_ = json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		if len(list.Runs) > 0 {
			runID = list.Runs[0].RunID
		}
		return runID != ""
	})
	res := s.rest(t, "POST", "/wunder/runs/"+runID+"/cancel?user_id=zed", "", nil)
	res.Body.Close()
	if code := <-codes; code != 200 {
		t.Fatalf("the admitted run's request answered %d after its cancel; want 200 with the cancelled run", code)
	}
	var out struct {
		Answer string `json:"answer"`
	}
	if code := postJSON(t, s.url+"/wunder", `{"user_id":"zed","question":"hi","stream":false}`, &out); code != 200 {
		t.Fatalf("zed's run after the first ended: %d %+v", code, out)
	}
}
