package orchestratortest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/storetest"
	"github.com/wunder/wunder/orchestrator"
)

// RunStoreTests runs the contract every [orchestrator.Store] passes, after
// adk-go's session/sessiontestsuite. newStore must return a fresh, empty
// store on every call (a new database file or schema for SQL backends). The
// suite closes each store when its test ends; the factory registers any
// other cleanup (removing files, dropping schemas) with t.Cleanup, which then
// runs after the close. Subtests call t.Parallel.
//
// Beyond the comments on [orchestrator.Store], the suite pins:
//
//   - Times round-trip at microsecond precision (truncated, not rounded) and
//     come back in UTC. Zero CreatedAt/UpdatedAt/Time values are set to the
//     store's clock on write, and written back through pointer arguments.
//   - Empty ids (and ttl <= 0, seq <= 0, nil pointers) are ErrInvalidArgument;
//     creating an existing session or run is ErrConflict.
//   - A message needs its session, a run its session and an event its run
//     (ErrNotFound otherwise, nothing written); a tool log needs nothing.
//   - ListSessions matches userID exactly (the empty user is a user);
//     RunFilter's empty fields match anything. Sessions list by UpdatedAt,
//     runs by CreatedAt, newest first, then Page applies; Page.Limit 0 is
//     the store's default (at least 100).
//   - Every list pages after a key (Page.After) and never by offset: paged
//     through the cursor helper while items are added, it shows each item
//     once and skips none behind the cursor (storesuite_paging.go).
//   - ListMessages and ListEvents of an unknown parent return nothing, not an
//     error. Empty JSON (nil or zero-length) round-trips as nil.
//   - UpdateRun leaves id, session, user, question, model name and CreatedAt
//     as they were created.
//   - RenewLock succeeds for the owner while nobody else has taken the lock,
//     even past its expiry (as AcquireLock by the owner would).
//   - Every string is kept as [orchestrator.StoredText] gives it (NUL and
//     invalid UTF-8 bytes become U+FFFD), ids and lookup arguments
//     included, JSON as [orchestrator.StoredJSON]; no text makes a call
//     fail ([CheckStoredText] on [TextSeeds]).
//   - Stores return copies: mutating a result or an argument after the call
//     never changes what is stored.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) orchestrator.Store) {
	t.Helper()
	st := &storeSuite{newStore: newStore}
	for _, group := range []struct {
		name  string
		tests map[string]func(*testing.T)
	}{
		{"Session", st.sessionTests()},
		{"Message", st.messageTests()},
		{"Run", st.runTests()},
		{"Event", st.eventTests()},
		{"ToolLog", st.toolLogTests()},
		{"Lock", st.lockTests()},
		{"Owner", st.ownerTests()},
		{"Lifecycle", st.lifecycleTests()},
		{"Approval", st.approvalTests()},
		{"Pause", st.pauseTests()},
		{"Monitor", st.monitorTests()},
		{"Audit", st.auditTests()},
		{"Paging", st.pagingTests()},
		{"Text", st.textTests()},
	} {
		t.Run(group.name, func(t *testing.T) {
			for _, name := range slices.Sorted(maps.Keys(group.tests)) {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					group.tests[name](t)
				})
			}
		})
	}
}

type storeSuite struct {
	newStore func(t *testing.T) orchestrator.Store
}

// open returns a fresh store closed at the end of the test.
func (st *storeSuite) open(t *testing.T) orchestrator.Store {
	t.Helper()
	s := st.newStore(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s
}

// The suite's fixed clock and a store's precision (storetest).
var (
	at = storetest.At
	us = storetest.US
)

func usp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := us(*t)
	return &v
}
