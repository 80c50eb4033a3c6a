package accountstest

import (
	"errors"
	"fmt"
	"slices"
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
func pageLen(p orchestrator.Page, n int) int {
	limit := p.Limit
	if limit <= 0 {
		limit = memDefaultLimit
	}
	return min(limit, n)
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

// pageThrough reads a list page by page through the core's cursor
// helper, calling between after each page but the last, and returns the
// ids in the order shown; an id shown twice fails the test.
func pageThrough[T any](t *testing.T, size int, list string, read func(orchestrator.Page) ([]T, error),
	key func(T) *orchestrator.PageKey, id func(T) string, between func(p int)) []string {
	t.Helper()
	var got []string
	cursor := ""
	for p := 0; ; p++ {
		pg, err := orchestrator.NewPager("cursor", cursor, size, list)
		mustDo(t, fmt.Sprintf("NewPager(page %d)", p), err)
		items, err := read(pg.Page)
		mustDo(t, fmt.Sprintf("list %s (page %d)", list, p), err)
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
