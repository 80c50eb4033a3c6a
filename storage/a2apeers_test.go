package storage

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// The pass-through's peer ids on both backends: the first claim wins, the
// kinds and peers are apart, and deleting a user forgets theirs.
func TestPeerIDs(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.fresh(t))
			ctx := t.Context()
			claim := func(peer, kind, id, user, want string) {
				t.Helper()
				got, err := st.ClaimPeerID(ctx, peer, kind, id, user)
				if err != nil || got != want {
					t.Fatalf("claim %s %s %s by %s = %q, %v; want %q", peer, kind, id, user, got, err, want)
				}
			}
			claim("p", "task", "t1", "alice", "alice")
			claim("p", "task", "t1", "alice", "alice") // again: still hers
			claim("p", "task", "t1", "bob", "alice")   // the first claim wins
			claim("p", "context", "t1", "bob", "bob")  // another kind
			claim("q", "task", "t1", "bob", "bob")     // another peer
			claim("p", "task", "t2", "bob", "bob")
			owners, err := st.PeerIDOwners(ctx, "p", "task", []string{"t1", "t2", "t3"}, "")
			if want := map[string]string{"t1": "alice", "t2": "bob"}; err != nil || !maps.Equal(owners, want) {
				t.Fatalf("owners = %v, %v; want %v", owners, err, want)
			}
			if _, err := st.ClaimPeerID(ctx, "p", "task", "", "alice"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("an empty id: %v", err)
			}
			// Several at once, as a new task and its context are claimed:
			// the owners in order, the first claim winning each.
			got, err := st.ClaimPeerIDs(ctx, "p", "carol", []string{"task", "context", "task"}, []string{"t9", "t1", "t2"})
			if want := []string{"carol", "bob", "bob"}; err != nil || !slices.Equal(got, want) {
				t.Fatalf("ClaimPeerIDs = %v, %v; want %v", got, err, want)
			}
			// The same id twice in one claim is one row, owned at both places.
			got, err = st.ClaimPeerIDs(ctx, "p", "dave", []string{"task", "task", "context"}, []string{"d1", "d1", "t1"})
			if want := []string{"dave", "dave", "bob"}; err != nil || !slices.Equal(got, want) {
				t.Fatalf("ClaimPeerIDs with a repeated id = %v, %v; want %v", got, err, want)
			}
			if _, err := st.ClaimPeerIDs(ctx, "p", "carol", []string{"task"}, []string{"a", "b"}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("kinds and ids of different lengths: %v", err)
			}
			if err := st.DeleteUserData(ctx, "alice"); err != nil {
				t.Fatal(err)
			}
			owners, err = st.PeerIDOwners(ctx, "p", "task", []string{"t1", "t2"}, "")
			if want := map[string]string{"t2": "bob"}; err != nil || !maps.Equal(owners, want) {
				t.Fatalf("after deleting alice: %v, %v; want %v", owners, err, want)
			}
		})
	}
}

// Peer ids expire from their last use on both backends: a look-up by the
// owner or the owner's claim uses an id again (once an hour at most), one
// by someone else does not; PrunePeerIDs deletes the ids last used before
// its cutoff and keeps the others, and a pruned id is no one's.
func TestPeerIDsExpire(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.fresh(t))
			ctx := t.Context()
			for _, id := range []string{"old", "looked-up", "reclaimed", "probed", "recent"} {
				if _, err := st.ClaimPeerID(ctx, "p", "task", id, "alice"); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Now()
			usedAt := func(id string, at time.Time) {
				t.Helper()
				if _, err := st.db.NewUpdate().Model((*peerIDRow)(nil)).Set("used_at = ?", stamp(at)).
					Where("peer = 'p' AND kind = 'task' AND id = ?", id).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			usedAtOf := func(id string) time.Time {
				t.Helper()
				var r peerIDRow
				if err := st.db.NewSelect().Model(&r).Where("peer = 'p' AND kind = 'task' AND id = ?", id).Scan(ctx); err != nil {
					t.Fatal(err)
				}
				return r.UsedAt
			}
			month := 40 * 24 * time.Hour
			for _, id := range []string{"old", "looked-up", "reclaimed", "probed"} {
				usedAt(id, now.Add(-month))
			}
			recent := now.Add(-30 * time.Minute)
			usedAt("recent", recent)

			// Uses: alice looks up two (one recent: not written again),
			// claims one again; bob looks up and claims one of hers.
			if _, err := st.PeerIDOwners(ctx, "p", "task", []string{"looked-up", "recent"}, "alice"); err != nil {
				t.Fatal(err)
			}
			if o, err := st.ClaimPeerID(ctx, "p", "task", "reclaimed", "alice"); err != nil || o != "alice" {
				t.Fatalf("alice claims hers again: %q %v", o, err)
			}
			if o, err := st.PeerIDOwners(ctx, "p", "task", []string{"probed"}, "bob"); err != nil || o["probed"] != "alice" {
				t.Fatalf("bob looks one up: %v %v", o, err)
			}
			if o, err := st.ClaimPeerID(ctx, "p", "task", "probed", "bob"); err != nil || o != "alice" {
				t.Fatalf("bob claims one of hers: %q %v", o, err)
			}
			if got := usedAtOf("recent"); !got.Equal(stamp(recent)) {
				t.Errorf("an id used half an hour ago was written again: used_at %v, want %v", got, stamp(recent))
			}
			for _, id := range []string{"looked-up", "reclaimed"} {
				if got := usedAtOf(id); got.Before(now.Add(-time.Minute)) {
					t.Errorf("%s was used by its owner, used_at still %v", id, got)
				}
			}

			n, err := st.PrunePeerIDs(ctx, now.Add(-30*24*time.Hour))
			if err != nil || n != 2 {
				t.Fatalf("prune: %d %v; want the 2 not used for 40 days", n, err)
			}
			owners, err := st.PeerIDOwners(ctx, "p", "task", []string{"old", "looked-up", "reclaimed", "probed", "recent"}, "")
			want := map[string]string{"looked-up": "alice", "reclaimed": "alice", "recent": "alice"}
			if err != nil || !maps.Equal(owners, want) {
				t.Fatalf("after the prune: %v %v; want %v", owners, err, want)
			}
			// Pruned, an id is no one's: the next claim takes it.
			if o, err := st.ClaimPeerID(ctx, "p", "task", "old", "bob"); err != nil || o != "bob" {
				t.Fatalf("a pruned id claimed by bob: %q %v", o, err)
			}
		})
	}
}

// A prune deletes in batches: more ids than one batch all go.
func TestPrunePeerIDsBatches(t *testing.T) {
	st := open(t, freshSQLite(t))
	ctx := t.Context()
	for i := range pruneBatch + 5 {
		if _, err := st.ClaimPeerID(ctx, "p", "context", fmt.Sprintf("c%d", i), "alice"); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.PrunePeerIDs(ctx, time.Now().Add(time.Minute)); err != nil || n != pruneBatch+5 {
		t.Fatalf("prune: %d %v; want %d", n, err, pruneBatch+5)
	}
}

// Peer ids claimed before they expired are dated from their claim: after
// the migration their last use is their creation, and a prune between two
// claims keeps the later.
func TestPeerIDsUsedMigration(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			opts.AutoMigrate = false
			s := open(t, opts)
			migrateBefore(t, s, "20261209010000")
			ctx := t.Context()
			old, recent := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			for id, at := range map[string]time.Time{"old": old, "recent": recent} {
				if _, err := s.db.NewRaw("INSERT INTO a2a_peer_ids (peer, kind, id, user_id, created_at) VALUES ('p', 'task', ?, 'alice', ?)", id, at).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			must(t, s.Migrate(ctx))
			n, err := s.PrunePeerIDs(ctx, time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC))
			owners, oerr := s.PeerIDOwners(ctx, "p", "task", []string{"old", "recent"}, "")
			if err != nil || oerr != nil || n != 1 || !maps.Equal(owners, map[string]string{"recent": "alice"}) {
				t.Fatalf("prune after the migration: %d %v, owners %v %v; want the old one gone", n, err, owners, oerr)
			}
		})
	}
}
