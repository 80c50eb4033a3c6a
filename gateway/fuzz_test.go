package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// FuzzWunderBody: whatever the body of POST /wunder, the answer is a run
// (200) or a 4xx problem, never a 5xx or a panic.
func FuzzWunderBody(f *testing.F) {
	for _, seed := range []string{
		`{"user_id":"u","question":"q","stream":false}`,
		`{"user_id":"u","question":"q","tool_names":["read_file","x"],"stream":false}`,
		`{"user_id":"../../etc","question":"q"}`,
		`{"user_id":"u","question":"q","session_id":"sess_\u0000"}`,
		`{"user_id":"u","question":"q","max_rounds":-5}`,
		`{"user_id":7}`, `[]`, `null`, `{`, ``, `{"user_id":"u","question":"q"}{}`,
	} {
		f.Add(seed)
	}
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(orchestratortest.Turn{Content: "ok"}), Settings: orchestrator.ModelSettings{MaxRounds: 2}}
	o := orchestrator.New(orchestratortest.NewMemStore(), models, orchestrator.NewRegistry("", nil, orchestratortest.NewFiles().Toolset()),
		&orchestrator.Options{PerUser: 1000, MaxActiveRuns: 1000})
	f.Cleanup(func() { _ = o.Close(f.Context()) })
	h := gateway.New(o, &gateway.Options{MaxBodyBytes: 4096}).Handler()
	f.Fuzz(func(t *testing.T, body string) {
		// Force JSON answers so the run's end is awaited and then checked.
		var obj map[string]any
		if json.Unmarshal([]byte(body), &obj) == nil && obj != nil {
			obj["stream"] = false
			b, _ := json.Marshal(obj)
			body = string(b)
		}
		req := httptest.NewRequest(http.MethodPost, "/wunder", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusOK:
			if !strings.Contains(rec.Body.String(), `"run_id"`) {
				t.Fatalf("200 without a run: %s", rec.Body)
			}
		case rec.Code >= 400 && rec.Code < 500:
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("%d with %q: %s", rec.Code, ct, rec.Body)
			}
		default:
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body)
		}
	})
}
