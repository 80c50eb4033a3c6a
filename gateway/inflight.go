package gateway

import (
	"net/http"
	"sync"
	"time"

	"github.com/wunder/wunder/internal/i18n"
)

// inFlight bounds the requests one principal has in flight at once
// (auth.max_in_flight), streams included: an SSE follow, an A2A or MCP
// stream, a Connect server stream each hold a slot until they end. The
// rate limit (ratelimit.go) bounds how fast requests come; this bounds
// what one principal holds, so that a user who opens stream after stream
// cannot take the server's memory and connections from the others.
//
// A user's credential counts for its user and an anonymous caller for its
// address, as in the rate limit. The API key is the operator's: it acts
// for many users and is not limited here (its runs are, by concurrency.*).
// Open paths and CORS preflights are never counted. The refused request
// gets 429 with Retry-After: 1 in its protocol's shape (Connect, gRPC and
// gRPC-Web RESOURCE_EXHAUSTED; A2A's busy error; problem JSON, code
// too_many_in_flight), its detail naming the limit.
type inFlight struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// inFlightRetry is the Retry-After of a refused request: a slot frees when
// one of the principal's requests ends, which a client cannot know.
const inFlightRetry = time.Second

func newInFlight(max int) *inFlight {
	if max <= 0 {
		return nil
	}
	return &inFlight{max: max, n: map[string]int{}}
}

// acquire takes a slot of key's, reporting false when all are held.
func (f *inFlight) acquire(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key] >= f.max {
		return false
	}
	f.n[key]++
	return true
}

func (f *inFlight) release(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key]--; f.n[key] <= 0 {
		delete(f.n, key) // the map holds only principals with requests
	}
}

// held is how many slots key holds (tests).
func (f *inFlight) held(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[key]
}

func limitInFlight(f *inFlight, open []string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if f == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := limitKey(r)
			if r.Method == http.MethodOptions || key == "api_key" || isOpenPath(open, r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			if !f.acquire(key) {
				lang := i18n.FromContext(r.Context())
				writeLimited(w, r, inFlightRetry, "too_many_in_flight", i18n.Messagef(lang, "too_many_in_flight_n", f.max))
				return
			}
			defer f.release(key)
			next.ServeHTTP(w, r)
		})
	}
}

// retrySeconds is d as a Retry-After value: whole seconds, rounded up,
// at least 1.
func retrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
