package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A slot is held while its request runs and freed when the handler
// returns, or panics; the map forgets a principal with nothing in flight.
func TestInFlightSlotsAreFreed(t *testing.T) {
	f := newInFlight(1)
	var during int
	h := limitInFlight(f, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		during = f.held("addr:192.0.2.1")
		if r.URL.Path == "/panic" {
			panic("handler")
		}
	}))
	req := func(path string) *http.Request {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = "192.0.2.1:1234"
		return r
	}
	h.ServeHTTP(httptest.NewRecorder(), req("/ok"))
	if during != 1 || f.held("addr:192.0.2.1") != 0 {
		t.Fatalf("held %d during the request, %d after; want 1, 0", during, f.held("addr:192.0.2.1"))
	}
	func() {
		defer func() { _ = recover() }()
		h.ServeHTTP(httptest.NewRecorder(), req("/panic"))
	}()
	if n := f.held("addr:192.0.2.1"); n != 0 || len(f.n) != 0 {
		t.Fatalf("after a panic: held %d, %d principals; want none", n, len(f.n))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req("/ok")) // the slot is free again
	if rec.Code != http.StatusOK {
		t.Fatalf("after the panic: %d", rec.Code)
	}
	if newInFlight(0) != nil {
		t.Fatal("max_in_flight 0 is no limit")
	}
}

// A refusal's JSON-RPC id is the request's when it can be read within
// maxIDPeek: a string or a number; anything else is null.
func TestRPCIDOfARefusedRequest(t *testing.T) {
	long := `{"jsonrpc":"2.0","params":{"x":"` + strings.Repeat("a", maxIDPeek) + `"},"id":9}`
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"GetTask"}`:       `7`,
		`{"jsonrpc":"2.0","id":"a-1","method":"GetTask"}`:   `"a-1"`,
		`{"jsonrpc":"2.0","id":-2.5,"method":"GetTask"}`:    `-2.5`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"GetTask"}`: `null`,
		`{"jsonrpc":"2.0","id":null}`:                       `null`,
		`[{"jsonrpc":"2.0","id":1}]`:                        `null`,
		`not json`:                                          `null`,
		``:                                                  `null`,
		long:                                                `null`,
	} {
		r := httptest.NewRequest("POST", "/a2a", strings.NewReader(body))
		if got := string(rpcID(r)); got != want {
			t.Errorf("rpcID(%.40q) = %s; want %s", body, got, want)
		}
	}
}
