package storage

import (
	"errors"
	"maps"
	"testing"

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
			owners, err := st.PeerIDOwners(ctx, "p", "task", []string{"t1", "t2", "t3"})
			if want := map[string]string{"t1": "alice", "t2": "bob"}; err != nil || !maps.Equal(owners, want) {
				t.Fatalf("owners = %v, %v; want %v", owners, err, want)
			}
			if _, err := st.ClaimPeerID(ctx, "p", "task", "", "alice"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("an empty id: %v", err)
			}
			if err := st.DeleteUserData(ctx, "alice"); err != nil {
				t.Fatal(err)
			}
			owners, err = st.PeerIDOwners(ctx, "p", "task", []string{"t1", "t2"})
			if want := map[string]string{"t2": "bob"}; err != nil || !maps.Equal(owners, want) {
				t.Fatalf("after deleting alice: %v, %v; want %v", owners, err, want)
			}
		})
	}
}
