package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// The ids of tasks and contexts made at published A2A peers through the
// pass-through (table a2a_peer_ids), and the user each belongs to: the
// a2a front-end's PeerIDStore, which cmd/wunder backs with these methods
// (storage imports no front-end). Deleting a user's data deletes theirs.

type peerIDRow struct {
	bun.BaseModel `bun:"table:a2a_peer_ids"`

	Peer      string    `bun:"peer,pk"`
	Kind      string    `bun:"kind,pk"`
	ID        string    `bun:"id,pk"`
	UserID    string    `bun:"user_id,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// ClaimPeerID records that userID owns the id of kind ("task",
// "context") at peer, unless someone already does, and returns the owner:
// userID, or whoever claimed it first.
func (s *Store) ClaimPeerID(ctx context.Context, peer, kind, id, userID string) (string, error) {
	if peer == "" || kind == "" || id == "" || userID == "" {
		return "", invalid("a peer id needs a peer, a kind, an id and a user")
	}
	row := &peerIDRow{Peer: peer, Kind: kind, ID: id, UserID: userID, CreatedAt: stamp(time.Now())}
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(row).On("CONFLICT (peer, kind, id) DO NOTHING").Exec(ctx)
		return dbErr(err, "claim", "a2a peer "+kind+" "+id)
	})
	if err != nil {
		return "", err
	}
	owners, err := s.PeerIDOwners(ctx, peer, kind, []string{id})
	if err != nil {
		return "", err
	}
	return owners[id], nil
}

// PeerIDOwners returns the owners of those of ids (of kind, at peer) that
// someone claimed.
func (s *Store) PeerIDOwners(ctx context.Context, peer, kind string, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []peerIDRow
	if err := s.db.NewSelect().Model(&rows).Column("id", "user_id").
		Where("peer = ? AND kind = ? AND id IN (?)", peer, kind, bun.List(ids)).Scan(ctx); err != nil {
		return nil, dbErr(err, "read", "a2a peer "+kind+"s")
	}
	for _, r := range rows {
		out[r.ID] = r.UserID
	}
	return out, nil
}
