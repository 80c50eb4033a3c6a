package gateway

import (
	"fmt"
	"net/http"

	"github.com/wunder/wunder/orchestrator"
)

// pageOf reads the page of a list that a request asks for: ?limit= (50
// when absent or 0, at most 500) and ?cursor=, the next_cursor of the page
// before ("" or absent: the first page), for list read with filter (see
// [orchestrator.NewPager]: a cursor of another list or filter is a 400).
// Lists page by cursor alone: ?offset= is a 400 that says so.
func pageOf(r *http.Request, list string, filter ...any) (orchestrator.Pager, error) {
	q := r.URL.Query()
	if q.Has("offset") {
		return orchestrator.Pager{}, fmt.Errorf("%w: offset is not supported: page with cursor, the next_cursor of the page before", orchestrator.ErrInvalidArgument)
	}
	limit, err := queryInt(r, "limit", 50, 500)
	if err != nil {
		return orchestrator.Pager{}, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err)
	}
	if limit == 0 {
		limit = 50 // 0 is the default, as it always was
	}
	return orchestrator.NewPager("cursor", q.Get("cursor"), limit, list, filter...)
}
