package storage

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The ids of tasks and contexts made at published A2A peers through the
// pass-through (table a2a_peer_ids), and the user each belongs to: the
// a2a front-end's PeerIDStore, which cmd/wunder backs with these methods
// (storage imports no front-end). Deleting a user's data deletes theirs.
//
// An id lives storage.a2a_peer_id_retention_days from its last use: a
// claim, or a look-up by its owner (used_at, written again only when it
// is older than peerIDUseStep, so that a look-up costs no write). The
// janitor deletes the ids not used since the cutoff (PrunePeerIDs); the
// task or context is then no one's, and its owner reaches it no more.

type peerIDRow struct {
	bun.BaseModel `bun:"table:a2a_peer_ids"`

	Peer      string    `bun:"peer,pk"`
	Kind      string    `bun:"kind,pk"`
	ID        string    `bun:"id,pk"`
	UserID    string    `bun:"user_id,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	UsedAt    time.Time `bun:"used_at,notnull"`
}

// peerIDUseStep is how precisely used_at follows the uses of an id: a use
// writes it again only when it is older than this.
const peerIDUseStep = time.Hour

// claimPeerIDs inserts claims (the rows, each "(?, ?, ?, ?, ?, ?)", are
// appended to it, then claimPeerIDsTail); one of the owner's own
// refreshes used_at when it is older than the step. A claim of someone
// else's id changes nothing. It returns the rows it inserted or refreshed,
// all the claimant's: an id missing from the answer is someone else's, or
// the claimant's own used within the step.
const (
	claimPeerIDs     = `INSERT INTO a2a_peer_ids (peer, kind, id, user_id, created_at, used_at) VALUES `
	claimPeerIDsTail = ` ON CONFLICT (peer, kind, id) DO UPDATE SET used_at = excluded.used_at
WHERE a2a_peer_ids.user_id = excluded.user_id AND a2a_peer_ids.used_at < ? RETURNING kind, id`
)

// ClaimPeerID records that userID owns the id of kind ("task",
// "context") at peer, unless someone already does, and returns the owner:
// userID, or whoever claimed it first. A claim of one's own id is a use
// of it.
func (s *Store) ClaimPeerID(ctx context.Context, peer, kind, id, userID string) (string, error) {
	owners, err := s.ClaimPeerIDs(ctx, peer, userID, []string{kind}, []string{id})
	if err != nil {
		return "", err
	}
	return owners[0], nil
}

// ClaimPeerIDs is ClaimPeerID for several ids at once (each of the kind
// at its index), in one transaction: the owners come back in order.
func (s *Store) ClaimPeerIDs(ctx context.Context, peer, userID string, kinds, ids []string) ([]string, error) {
	if peer == "" || userID == "" || len(ids) == 0 || len(kinds) != len(ids) {
		return nil, invalid("peer ids need a peer, a user, and a kind for each id")
	}
	for i, id := range ids {
		if kinds[i] == "" || id == "" {
			return nil, invalid("a peer id needs a peer, a kind, an id and a user")
		}
	}
	type key = [2]string
	owner := make(map[key]string, len(ids))
	var query strings.Builder
	query.WriteString(claimPeerIDs)
	now := stamp(time.Now())
	args := make([]any, 0, 6*len(ids)+1)
	for i, id := range ids {
		k := key{kinds[i], id}
		if _, dup := owner[k]; dup {
			continue // one row may not be claimed twice in one statement
		}
		owner[k] = ""
		if len(args) > 0 {
			query.WriteString(", ")
		}
		query.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, peer, kinds[i], id, userID, now, now)
	}
	query.WriteString(claimPeerIDsTail)
	args = append(args, now.Add(-peerIDUseStep))
	// One statement claims them all and says which are the claimant's;
	// only the rest are read (a new task and its context need no read).
	var claimed []peerIDRow
	q := query.String()
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		claimed = claimed[:0] // the writer may run fn again
		// On SQLite a prepared statement: parsing the upsert was about
		// half of a claim's cost (docs/a2a.md, "Cost").
		rows, ok, err := s.queryPrepared(ctx, db, q, bind(args...))
		if !ok {
			return dbErr(db.NewRaw(q, args...).Scan(ctx, &claimed), "claim", "a2a peer ids")
		}
		if err != nil {
			return dbErr(err, "claim", "a2a peer ids")
		}
		defer rows.Close()
		for rows.Next() {
			var r peerIDRow
			if err := rows.Scan(&r.Kind, &r.ID); err != nil {
				return dbErr(err, "claim", "a2a peer ids")
			}
			claimed = append(claimed, r)
		}
		return dbErr(rows.Err(), "claim", "a2a peer ids")
	})
	if err != nil {
		return nil, err
	}
	for _, r := range claimed {
		owner[key{r.Kind, r.ID}] = userID
	}
	var rest []key
	for k, o := range owner {
		if o == "" {
			rest = append(rest, k)
		}
	}
	if len(rest) > 0 {
		var rows []peerIDRow
		if err := s.db.NewSelect().Model(&rows).Column("kind", "id", "user_id").
			Where("peer = ?", peer).
			WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
				for _, k := range rest {
					q = q.WhereOr("kind = ? AND id = ?", k[0], k[1])
				}
				return q
			}).Scan(ctx); err != nil {
			return nil, dbErr(err, "read", "a2a peer ids")
		}
		for _, r := range rows {
			owner[key{r.Kind, r.ID}] = r.UserID
		}
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = owner[key{kinds[i], id}]
	}
	return out, nil
}

// PeerIDOwners returns the owners of those of ids (of kind, at peer) that
// someone claimed. usedBy, when not "", is the user the look-up is for:
// those of the ids it owns are used (their lifetime starts again).
func (s *Store) PeerIDOwners(ctx context.Context, peer, kind string, ids []string, usedBy string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []peerIDRow
	if err := s.db.NewSelect().Model(&rows).Column("id", "user_id", "used_at").
		Where("peer = ? AND kind = ? AND id IN (?)", peer, kind, bun.List(ids)).Scan(ctx); err != nil {
		return nil, dbErr(err, "read", "a2a peer "+kind+"s")
	}
	now := stamp(time.Now())
	var stale []string
	for _, r := range rows {
		out[r.ID] = r.UserID
		if usedBy != "" && r.UserID == usedBy && r.UsedAt.Before(now.Add(-peerIDUseStep)) {
			stale = append(stale, r.ID)
		}
	}
	if len(stale) > 0 {
		err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
			_, err := db.NewUpdate().Model((*peerIDRow)(nil)).Set("used_at = ?", now).
				Where("peer = ? AND kind = ? AND id IN (?) AND user_id = ?", peer, kind, bun.List(stale), usedBy).Exec(ctx)
			return dbErr(err, "use", "a2a peer "+kind+"s")
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PrunePeerIDs deletes the peer ids last used before cutoff, in batches
// until none is left or ctx ends, and returns how many went.
func (s *Store) PrunePeerIDs(ctx context.Context, cutoff time.Time) (int, error) {
	cutoff = cutoff.UTC()
	return s.deleteInBatches(ctx, "prune peer ids", "a2a_peer_ids", func(db bun.IDB) *bun.DeleteQuery {
		// used_at's index picks a batch; the primary key deletes it.
		sub := db.NewSelect().Model((*peerIDRow)(nil)).Column("peer", "kind", "id").Where("used_at < ?", cutoff).Limit(pruneBatch)
		return db.NewDelete().Model((*peerIDRow)(nil)).Where("(peer, kind, id) IN (?)", sub)
	})
}
