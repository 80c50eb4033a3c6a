package accountstest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/orchestrator"
)

// txt is what a store keeps of a string.
var txt = orchestrator.StoredText

// memDefaultLimit is the page size of a listing without a limit.
const memDefaultLimit = 100

// stamp is a time as a store keeps it: microseconds, UTC, now for zero.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.Round(0).Truncate(time.Microsecond).UTC()
}

func stampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Round(0).Truncate(time.Microsecond).UTC()
	return &v
}

// page is the slice [from, to) of n items a page selects.
func page(p orchestrator.Page, n int) (from, to int) {
	limit := p.Limit
	if limit <= 0 {
		limit = memDefaultLimit
	}
	from = min(max(p.Offset, 0), n)
	return from, min(from+limit, n)
}

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

func at(d time.Duration) time.Time { return t0.Add(d) }

// us is t at a store's precision: microseconds, UTC.
func us(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

func mustDo(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v; want an error wrapping %q", what, err, target)
	}
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}
