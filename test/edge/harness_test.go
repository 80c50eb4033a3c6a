package edge

import (
	"net/http"
	"testing"

	"github.com/wunder/wunder/internal/testutil/wunderproc"
)

// maxPeakRSS is the memory bound every hostile case must stay under
// (issue 35): the whole server's peak resident set, start-up included.
const maxPeakRSS = 1 << 30

// The harness itself: a real server starts on defaults, answers, and its
// peak RSS is read (and is far below the bound at rest).
func TestHarnessServesAndReportsRSS(t *testing.T) {
	wunderproc.NeedLinux(t)
	p := wunderproc.Start(t, wunderproc.Build(t), "")
	resp, err := http.Get(p.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz = %d", resp.StatusCode)
	}
	peak := p.PeakRSS(t)
	if peak < 1<<20 || peak >= maxPeakRSS {
		t.Fatalf("peak RSS at rest = %d bytes; want between 1 MiB and %d", peak, maxPeakRSS)
	}
	t.Logf("peak RSS at rest: %d MiB", peak>>20)
}
