package orchestrator

import (
	"sort"
	"strings"
	"testing"
	"time"
)

func TestSortableIDOrdersByTime(t *testing.T) {
	base := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	var ids []string
	for i := 0; i < 200; i++ {
		ids = append(ids, sortableID(base.Add(time.Duration(i)*time.Millisecond)))
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("ids issued a millisecond apart do not sort in time order: %v", ids[:5])
	}
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := sortableID(base) // same millisecond: only the random part differs
		if len(id) != 26 || strings.Trim(id, sortableAlphabet) != "" {
			t.Fatalf("id %q: want 26 characters of %q", id, sortableAlphabet)
		}
		if seen[id] {
			t.Fatalf("id %q issued twice", id)
		}
		seen[id] = true
		if err := CheckRunID("run_" + id); err != nil {
			t.Fatalf("CheckRunID(run_%s): %v", id, err)
		}
	}
	// The time part is the first ten characters, big-endian.
	if a, b := sortableID(time.UnixMilli(1)), sortableID(time.UnixMilli(1<<45)); a[:10] != "0000000001" || b[:10] != "1000000000" {
		t.Fatalf("time prefix: %q, %q", a[:10], b[:10])
	}
}
