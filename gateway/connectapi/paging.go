package connectapi

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// Page tokens are opaque to clients: "v2.<key>.<filter hash>" in unpadded
// base64url, where key is the last item's place in the listing
// ([orchestrator.PageKey]), so the next page is read alone however deep it
// is and an item added meanwhile shifts nothing. The hash binds a token to
// the listing and filter it came from, so a token replayed with another
// filter is INVALID_ARGUMENT instead of a silently wrong page. Tokens of
// the earlier form, "v1.<offset>.<filter hash>", are still read.

const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// page is a decoded page request.
type page struct {
	size   int
	offset int                   // a v1 token's
	after  *orchestrator.PageKey // a v2 token's
	filter string
}

// decodePage validates page_size and page_token for a listing whose filter
// is described by parts.
func decodePage(size int32, token string, parts ...any) (page, error) {
	p := page{size: int(size), filter: filterHash(parts...)}
	switch {
	case size < 0:
		return p, invalid("page_size must not be negative")
	case size == 0:
		p.size = defaultPageSize
	case size > maxPageSize:
		p.size = maxPageSize
	}
	if token == "" {
		return p, nil
	}
	notOurs := invalid("page_token is not a token this server issued")
	raw, err := base64.RawURLEncoding.DecodeString(token)
	f := strings.Split(string(raw), ".")
	if err != nil || len(f) != 3 {
		return p, notOurs
	}
	switch f[0] {
	case "v1":
		if p.offset, err = strconv.Atoi(f[1]); err != nil || p.offset < 0 {
			return p, notOurs
		}
	case "v2":
		if p.after, err = orchestrator.ParsePageToken(f[1]); err != nil {
			return p, notOurs
		}
	default:
		return p, notOurs
	}
	if f[2] != p.filter {
		return p, invalid("page_token belongs to a listing with another filter")
	}
	return p, nil
}

// query asks the core for one item more than the page, to learn whether
// another page follows.
func (p page) query() orchestrator.Page {
	return orchestrator.Page{Limit: p.size + 1, Offset: p.offset, After: p.after}
}

// cut trims the extra item and returns the next page's token ("" at the
// end): the key of the page's last item.
func cut[T any](p page, items []T, key func(T) *orchestrator.PageKey) ([]T, string) {
	if len(items) <= p.size {
		return items, ""
	}
	items = items[:p.size]
	next := "v2." + key(items[len(items)-1]).Token() + "." + p.filter
	return items, base64.RawURLEncoding.EncodeToString([]byte(next))
}

func filterHash(parts ...any) string {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
