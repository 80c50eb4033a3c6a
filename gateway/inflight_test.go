package gateway

import (
	"net/http"
	"net/http/httptest"
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
