package memorytest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stamp is a time as a store keeps it: microseconds, UTC, now for zero.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.Round(0).Truncate(time.Microsecond).UTC()
}

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
