// Package storetest holds what the store contract suites share (the
// core's in orchestratortest, and those of accounts, memory and
// toolconfig): assertions that name what was checked, the suites' fixed
// clock, the precision a store keeps times at, and paging through a list
// with the core's cursor. It imports the core and nothing else of ours.
package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/orchestrator"
)

// MustDo fails the test at once when err is not nil.
func MustDo(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

// WantErr reports an error unless err wraps target.
func WantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v; want an error wrapping %q", what, err, target)
	}
}

// Diff reports how got differs from want.
func Diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// T0 is the suites' fixed clock: nanoseconds and a non-UTC zone on
// purpose, so every test also checks truncation to microseconds and
// conversion to UTC.
var T0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

// At is T0 plus d.
func At(d time.Duration) time.Time { return T0.Add(d) }

// US is t as a store gives it back: microseconds, UTC.
func US(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// Stamp is a time as a store keeps it: microseconds, UTC, now for zero.
func Stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.Round(0).Truncate(time.Microsecond).UTC()
}

// StampPtr is Stamp of a time that may be unset (nil stays nil, and a
// zero time stays zero).
func StampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Round(0).Truncate(time.Microsecond).UTC()
	return &v
}

// PageLen is how many of n items a page takes: its limit, or def when it
// sets none.
func PageLen(p orchestrator.Page, n, def int) int {
	limit := p.Limit
	if limit <= 0 {
		limit = def
	}
	return min(limit, n)
}

// PageThrough reads a list page by page through the core's cursor helper
// (a page of size, of the list named list), calling between after each
// page but the last, and returns the ids in the order shown; an id shown
// twice, or more than 100 pages, fails the test.
func PageThrough[T any](t *testing.T, size int, list string, read func(orchestrator.Page) ([]T, error),
	key func(T) *orchestrator.PageKey, id func(T) string, between func(p int)) []string {
	t.Helper()
	var got []string
	cursor := ""
	for p := 0; ; p++ {
		pg, err := orchestrator.NewPager("cursor", cursor, size, list)
		MustDo(t, fmt.Sprintf("NewPager(page %d)", p), err)
		items, err := read(pg.Page)
		MustDo(t, fmt.Sprintf("list %s (page %d)", list, p), err)
		items, cursor = orchestrator.CutPage(pg, items, key)
		for _, x := range items {
			if slices.Contains(got, id(x)) {
				t.Fatalf("%s: %s shown twice (page %d)", list, id(x), p)
			}
			got = append(got, id(x))
		}
		if cursor == "" {
			return got
		}
		if p > 100 {
			t.Fatalf("%s: more than 100 pages of %d", list, size)
		}
		between(p)
	}
}
