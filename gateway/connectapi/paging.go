package connectapi

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// Page tokens are opaque to clients: "v1.<offset>.<filter hash>" in
// unpadded base64url. The hash binds a token to the listing and filter it
// came from, so a token replayed with another filter is INVALID_ARGUMENT
// instead of a silently wrong page.

const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// page is a decoded page request.
type page struct {
	size, offset int
	filter       string
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
	raw, err := base64.RawURLEncoding.DecodeString(token)
	f := strings.Split(string(raw), ".")
	if err != nil || len(f) != 3 || f[0] != "v1" {
		return p, invalid("page_token is not a token this server issued")
	}
	off, err := strconv.Atoi(f[1])
	if err != nil || off < 0 {
		return p, invalid("page_token is not a token this server issued")
	}
	if f[2] != p.filter {
		return p, invalid("page_token belongs to a listing with another filter")
	}
	p.offset = off
	return p, nil
}

// query asks the core for one item more than the page, to learn whether
// another page follows.
func (p page) query() orchestrator.Page {
	return orchestrator.Page{Limit: p.size + 1, Offset: p.offset}
}

// cut trims the extra item and returns the next page's token ("" at the end).
func cut[T any](p page, items []T) ([]T, string) {
	if len(items) <= p.size {
		return items, ""
	}
	next := "v1." + strconv.Itoa(p.offset+p.size) + "." + p.filter
	return items[:p.size], base64.RawURLEncoding.EncodeToString([]byte(next))
}

func filterHash(parts ...any) string {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
