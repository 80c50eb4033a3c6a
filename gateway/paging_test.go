package gateway_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// Every list refuses, with a 400 invalid_argument that names cursor, a
// cursor it did not issue: another list's, its own with another filter,
// garbage. And every list refuses ?offset=, naming cursor: lists page by
// cursor alone.
func TestListsRefuseForeignCursors(t *testing.T) {
	e := newEnv(t, envOpts{
		gw:    gateway.Options{APIKey: adminKey, Auth: gateway.AuthOptions{Accounts: accountstest.NewMemStore()}},
		turns: []orchestratortest.Turn{{Content: "ok"}, {Content: "ok"}},
	})
	key := []string{"X-API-Key", adminKey}
	for i := range 2 {
		decode[map[string]any](t, e.do(t, "POST", "/wunder", fmt.Sprintf(`{"user_id":"u","question":"q%d","stream":false}`, i), key...), 200)
	}
	page := decode[struct {
		Next string `json:"next_cursor"`
	}](t, e.do(t, "GET", "/wunder/sessions?user_id=u&limit=1", "", key...), 200)
	if page.Next == "" {
		t.Fatal("two sessions in pages of one: no next_cursor")
	}
	sessions := url.QueryEscape(page.Next)
	for _, route := range []string{
		"/wunder/runs?user_id=u",
		"/wunder/sessions?user_id=v", // the sessions list, another user's
		"/wunder/admin/monitor?user_id=u",
		"/wunder/admin/users?",
		"/wunder/admin/users/v/sessions?",
		"/wunder/admin/user_accounts?",
		"/wunder/admin/audit?user_id=u",
	} {
		for _, c := range []struct{ query, detail string }{
			{"&cursor=" + sessions, "cursor is a cursor of another list or filter"},
			{"&cursor=bm8tZG90", "cursor is not a cursor this server issued"},
			{"&cursor=40", "cursor is not a cursor this server issued"},
			{"&offset=1", "offset is not supported: page with cursor"},
		} {
			p := wantProblem(t, e.do(t, "GET", route+c.query, "", key...), 400, "invalid_argument")
			if !strings.Contains(p.Detail, c.detail) {
				t.Errorf("GET %s%s: %q; want it to say %q", route, c.query, p.Detail, c.detail)
			}
		}
	}
	// The list and filter the cursor came from take it.
	decode[map[string]any](t, e.do(t, "GET", "/wunder/sessions?user_id=u&limit=1&cursor="+sessions, "", key...), 200)
}
