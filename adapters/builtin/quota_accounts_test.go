package builtin

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// The quota keeps at most maxAccounts accounts: a new workspace's account
// takes the place of an idle one, never of one with writes or commands in
// flight (whose numbers would be lost); when none is idle the map grows
// past the bound rather than forget a busy one.
func TestQuotaAccountsBound(t *testing.T) {
	q := newQuota(1 << 20)
	// Every account busy (a write reserved, or a command running) but one.
	busy := map[string]*account{}
	for i := 1; i < maxAccounts; i++ {
		dir := fmt.Sprintf("/ws/%d", i)
		a := q.account(dir)
		if i%2 == 0 {
			a.reserved = 1
		} else {
			a.running = 1
		}
		busy[dir] = a
	}
	q.account("/ws/idle")
	if len(q.accounts) != maxAccounts {
		t.Fatalf("setup: %d accounts", len(q.accounts))
	}
	fresh := q.account("/ws/new")
	if _, ok := q.accounts["/ws/idle"]; ok {
		t.Error("the idle account was kept while a new one went past the bound")
	}
	if q.accounts["/ws/new"] != fresh || len(q.accounts) != maxAccounts {
		t.Errorf("%d accounts after adding one at the bound; want %d", len(q.accounts), maxAccounts)
	}
	for dir, a := range busy {
		if q.accounts[dir] != a {
			t.Fatalf("busy account %s was dropped", dir)
		}
	}
	// Nothing idle: nothing dropped, the map grows.
	fresh.reserved = 1
	q.account("/ws/newer")
	if len(q.accounts) != maxAccounts+1 {
		t.Errorf("%d accounts; want %d (busy accounts are never dropped)", len(q.accounts), maxAccounts+1)
	}
	// The same directory gets the same account.
	if q.account("/ws/new") != fresh {
		t.Error("a second lookup of a workspace made a new account")
	}
}

// A QuotaError says what was refused and how to make room, names the
// config key, and is a permission denial to callers that know only the
// core's sentinels.
func TestQuotaErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  *QuotaError
		want []string
	}{
		{&QuotaError{Used: 900, Adding: 200, Limit: 1024},
			[]string{"holds 900 B and this would add 200 B, over its quota of 1.0 KiB", quotaKey, "nothing was written"}},
		{&QuotaError{Used: 3 << 20, Limit: 2 << 20},
			[]string{"holds 3.0 MiB, over its quota of 2.0 MiB", quotaKey, "refused until files are deleted"}},
	} {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
		var err error = tc.err
		if !errors.Is(err, orchestrator.ErrPermissionDenied) || !tc.err.QuotaExceeded() {
			t.Errorf("%v: not a permission denial marked as a quota refusal", err)
		}
	}
}
