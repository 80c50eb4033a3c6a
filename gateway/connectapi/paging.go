package connectapi

import (
	"github.com/wunder/wunder/orchestrator"
)

// Lists take page_size (0: 50, at most 500) and page_token, the
// next_page_token of the page before, and answer next_page_token ("" on
// the last page). Tokens are the core's one cursor
// ([orchestrator.NewPager]): opaque, the last item's place in the list, and
// bound to the list and filter they were issued for, so a token replayed
// with another filter is INVALID_ARGUMENT rather than a silently wrong
// page.

const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// pageOf reads page_size and page_token for list read with filter.
func pageOf(size int32, token, list string, filter ...any) (orchestrator.Pager, error) {
	switch {
	case size < 0:
		return orchestrator.Pager{}, invalid("page_size must not be negative")
	case size == 0:
		size = defaultPageSize
	case size > maxPageSize:
		size = maxPageSize
	}
	return orchestrator.NewPager("page_token", token, int(size), list, filter...)
}
