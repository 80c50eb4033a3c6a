package orchestrator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"
)

// Paging, the one way every list pages: runs, sessions, user accounts,
// the users' statistics, the audit and the MCP catalog, on every
// front-end.
//
// A page starts after the last item of the page before, its [PageKey]
// (the item's sort time and id): never at an offset. The store reads the
// page alone, however deep it is, and an item added or moved meanwhile is
// neither shown twice nor makes another one skipped.
//
// A client carries the key as a cursor: opaque, the same bytes whatever the
// protocol calls it (HTTP next_cursor and ?cursor=, A2A nextPageToken and
// pageToken, MCP nextCursor and cursor, Connect next_page_token and
// page_token). Front-ends read one with [NewPager] and hand out the next
// with [CutPage]; nothing else encodes or decodes a cursor.
//
// A cursor holds a version, the hash of the list and filter it was issued
// for, the key, and a checksum of all that. Garbage, a cursor cut or
// edited, and a cursor of another list or filter are refused as
// ErrInvalidArgument naming the parameter. The checksum is not a secret's
// MAC: a forged cursor can only choose where the caller's own list starts
// (every list is scoped to the caller in the store's query), so a key
// shared by every replica would protect nothing.

// Page bounds a listing.
type Page struct {
	// Limit is the most items the page holds; zero means the store's
	// default.
	Limit int
	// After, when set, starts the page after this item of the list: the
	// store starts at its place in the list's index.
	After *PageKey
}

// PageKey is an item's place in its listing's order, where the next page
// starts: for sessions (newest updated first) the session's UpdatedAt and
// ID, for runs (newest first) the run's CreatedAt and ID, for users (by
// ID) the user's ID with a zero At, for the users' statistics (most
// recently active first, then by id) LastActive and UserID, for the audit
// (newest first) the record's CreatedAt and ID.
type PageKey struct {
	At time.Time
	ID string
}

// SessionKey is where a listing of sessions goes on after s.
func SessionKey(s *Session) *PageKey { return &PageKey{At: s.UpdatedAt, ID: s.ID} }

// RunKey is where a listing of runs goes on after r.
func RunKey(r *Run) *PageKey { return &PageKey{At: r.CreatedAt, ID: r.ID} }

// UserStatsKey is where a listing of the users' statistics goes on after u.
func UserStatsKey(u UserStats) *PageKey { return &PageKey{At: u.LastActive, ID: u.UserID} }

// Pager is a page of one list as a front-end reads it: Size items, and
// Page, what to ask the store for (one item more than Size, to learn
// whether another page follows, after the client's cursor).
type Pager struct {
	Size  int
	Page  Page
	scope [scopeLen]byte
}

// NewPager reads cursor, the cursor a client sent as param (its name on
// the client's protocol, for the error; "" asks for the first page), for
// a page of size items of list read with filter. list names the items and
// their order ("runs", "sessions", ...); filter is every value that
// selects the items (user, session, states, ...), each printed with %v. A
// cursor fits only the list and filter it was issued for: another one is
// ErrInvalidArgument, as is anything this server did not issue.
func NewPager(param, cursor string, size int, list string, filter ...any) (Pager, error) {
	p := Pager{Size: size, Page: Page{Limit: size + 1}, scope: scopeOf(list, filter)}
	if cursor == "" {
		return p, nil
	}
	k, scope, ok := decodeCursor(cursor)
	if !ok {
		return p, fmt.Errorf("%w: %s is not a cursor this server issued: send the cursor of the page before as it came, or none for the first page", ErrInvalidArgument, param)
	}
	if scope != p.scope {
		return p, fmt.Errorf("%w: %s is a cursor of another list or filter: send the filter of the page before, or no %s for the first page", ErrInvalidArgument, param, param)
	}
	p.Page.After = k
	return p, nil
}

// Cursor is the cursor of the page after key's item, for p's list and
// filter.
func (p Pager) Cursor(key *PageKey) string { return encodeCursor(p.scope, key) }

// CutPage cuts items, what the store answered p.Page, to p.Size and
// returns the cursor of the next page: "" when this one is the last.
// Items are never nil.
func CutPage[T any](p Pager, items []T, key func(T) *PageKey) ([]T, string) {
	if len(items) <= p.Size {
		if items == nil {
			items = []T{}
		}
		return items, ""
	}
	items = items[:p.Size]
	if p.Size == 0 {
		return items, ""
	}
	return items, p.Cursor(key(items[p.Size-1]))
}

// A cursor, before unpadded base64url:
//
//	version (1 byte) | scope (8) | has time (1) | [time: varint µs] | id | checksum (8)
//
// The checksum is the first 8 bytes of the SHA-256 of what precedes it.
const (
	cursorVersion = 1
	scopeLen      = 8
	sumLen        = 8
)

// The times a cursor may hold: years 1 to 9999 (PostgreSQL refuses one
// before 4713 BC: a 500 for a cursor that decodes).
var (
	minCursorMicro = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxCursorMicro = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

func scopeOf(list string, filter []any) (s [scopeLen]byte) {
	h := sha256.New()
	for _, part := range append([]any{list}, filter...) {
		v := fmt.Sprint(part)
		h.Write(binary.AppendUvarint(nil, uint64(len(v))))
		h.Write([]byte(v))
	}
	copy(s[:], h.Sum(nil))
	return s
}

func encodeCursor(scope [scopeLen]byte, k *PageKey) string {
	b := append([]byte{cursorVersion}, scope[:]...)
	if k.At.IsZero() {
		b = append(b, 0)
	} else {
		b = binary.AppendVarint(append(b, 1), k.At.UnixMicro())
	}
	b = append(b, k.ID...)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(append(b, sum[:sumLen]...))
}

func decodeCursor(tok string) (k *PageKey, scope [scopeLen]byte, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 1+scopeLen+1+sumLen {
		return nil, scope, false
	}
	body, sum := b[:len(b)-sumLen], b[len(b)-sumLen:]
	if want := sha256.Sum256(body); !bytes.Equal(sum, want[:sumLen]) || body[0] != cursorVersion {
		return nil, scope, false
	}
	copy(scope[:], body[1:])
	rest := body[1+scopeLen:]
	k = &PageKey{}
	switch rest[0] {
	case 0:
		rest = rest[1:]
	case 1:
		us, n := binary.Varint(rest[1:])
		if n <= 0 || us < minCursorMicro || us > maxCursorMicro {
			return nil, scope, false
		}
		k.At, rest = time.UnixMicro(us).UTC(), rest[1+n:]
	default:
		return nil, scope, false
	}
	if len(rest) == 0 {
		return nil, scope, false
	}
	k.ID = string(rest)
	return k, scope, true
}
