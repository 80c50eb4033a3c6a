package llm_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// TestConnection makes one real chat call: a working endpoint answers
// with its reply and latency; a wrong path (404) is refused, a server
// error failed, a closed port unreachable — each with the endpoint and
// the reason in the error, and one request each (no retry).
func TestTestConnection(t *testing.T) {
	fake := &fakellm.Server{}
	ok := httptest.NewServer(fake)
	t.Cleanup(ok.Close)
	var served int
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(`{"error":{"message":"upstream down"}}`))
	}))
	t.Cleanup(broken.Close)
	missing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(missing.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()

	cfg := func(base string) llm.Config {
		return llm.Config{Name: "m", Provider: llm.ProviderLocal, BaseURL: base, Model: "fake"}
	}
	got := llm.TestConnection(t.Context(), cfg(ok.URL+"/v1"))
	if !got.OK || !strings.Contains(got.Reply, "connection test") || got.Error != "" || fake.Requests.Load() != 1 {
		t.Errorf("working endpoint: %+v (%d requests)", got, fake.Requests.Load())
	}
	for _, tc := range []struct {
		name, base, kind, says string
	}{
		{"no such API", missing.URL + "/v1", "refused", "404"},
		{"server error", broken.URL + "/v1", "failed", "upstream down"},
		{"closed port", closed, "unreachable", ln.Addr().String()},
	} {
		got := llm.TestConnection(t.Context(), cfg(tc.base))
		if got.OK || got.Kind != tc.kind || !strings.Contains(got.Error, tc.says) {
			t.Errorf("%s: %+v; want kind %s and an error naming %q", tc.name, got, tc.kind, tc.says)
		}
	}
	if served != 1 {
		t.Errorf("the failing server was called %d times; want once (no retry)", served)
	}
	if got := llm.TestConnection(t.Context(), llm.Config{Name: "m", Provider: "openai", Model: "gpt"}); got.OK || got.Kind != "refused" || !strings.Contains(got.Error, "api_key") {
		t.Errorf("a config without its key: %+v; want refused, naming the key", got)
	}
}
