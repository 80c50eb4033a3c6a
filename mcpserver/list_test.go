package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// tools/list pages by the core's one cursor: pages of two walk wunder's
// tools and then the caller's catalog once, in the order of the whole
// list; the last page has no nextCursor.
func TestToolsListPagesByCursor(t *testing.T) {
	t.Parallel()
	_, url := newCatalogEnvPaged(t, true, 2)
	alice := connect(t, url, &http.Client{Transport: bearer("alice")}, nil)
	var got []string
	var pages int
	// The client's iterator follows nextCursor.
	for tool, err := range alice.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tool.Name)
	}
	for cursor := ""; pages == 0 || cursor != ""; pages++ {
		res, err := alice.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil || len(res.Tools) == 0 || len(res.Tools) > 2 {
			t.Fatalf("page %d: %+v, %v", pages, res, err)
		}
		cursor = res.NextCursor
	}
	if want := []string{"wunder__approve", "wunder__run", "fs__grep", "fs__rm", "vault__secret"}; !slices.Equal(got, want) || pages != 3 {
		t.Errorf("alice's tools in %d pages of 2 = %q, want %q in 3", pages, got, want)
	}
}

// A cursor tools/list did not issue for this list and caller, another
// list's, or garbage, is invalid params (-32602) naming cursor.
func TestToolsListRefusesForeignCursors(t *testing.T) {
	t.Parallel()
	_, url := newCatalogEnvPaged(t, true, 2)
	alice := connect(t, url, &http.Client{Transport: bearer("alice")}, nil)
	bob := connect(t, url, &http.Client{Transport: bearer("bob")}, nil)
	first, err := alice.ListTools(context.Background(), nil)
	if err != nil || first.NextCursor == "" {
		t.Fatalf("alice's first page: %+v, %v", first, err)
	}
	sessions, err := orchestrator.NewPager("cursor", "", 2, "sessions", "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cs     *mcp.ClientSession
		cursor string
		detail string
	}{
		{"another caller's", bob, first.NextCursor, "another list or filter"},
		{"another list's", alice, sessions.Cursor(&orchestrator.PageKey{At: time.Now(), ID: "sess_x"}), "another list or filter"},
		{"an offset", alice, "2", "not a cursor this server issued"},
		{"garbage", alice, "%%%", "not a cursor this server issued"},
	} {
		_, err := tc.cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: tc.cursor})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "cursor") || !strings.Contains(rpcErr.Message, tc.detail) {
			t.Errorf("tools/list with %s cursor: %v; want -32602 naming cursor: %s", tc.name, err, tc.detail)
		}
	}
}
