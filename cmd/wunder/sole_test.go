package main

import (
	"net/http/httptest"
	"strings"
	"testing"

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
