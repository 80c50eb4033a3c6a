package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// POST /wunder/sessions/{id}/title renames the caller's session: the
// title is trimmed, kept in the listing's order, and bounded; bad input
// gets a problem naming what is wrong (issue 40). Who may rename whose
// session is the isolation matrix's row "REST session rename".
func TestRenameSession(t *testing.T) {
	s := startServer(t, nil)
	var first, second struct {
		SessionID string `json:"session_id"`
	}
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"ren","question":"first","stream":false}`, nil), 200, &first)
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"ren","question":"second","stream":false}`, nil), 200, &second)
	title := "/wunder/sessions/" + first.SessionID + "/title"

	var renamed struct {
		ID    string `json:"session_id"`
		Title string `json:"title"`
	}
	decodeInto(t, restDo(t, "POST", s.url+title, `{"user_id":"ren","title":"  Trip to Zürich  "}`, nil), 200, &renamed)
	if renamed.ID != first.SessionID || renamed.Title != "Trip to Zürich" {
		t.Errorf("the answer: %+v; want the session, its title trimmed", renamed)
	}
	var list struct {
		Sessions []struct {
			ID    string `json:"session_id"`
			Title string `json:"title"`
		} `json:"sessions"`
	}
	decodeInto(t, restDo(t, "GET", s.url+"/wunder/sessions?user_id=ren", "", nil), 200, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].ID != second.SessionID || list.Sessions[1].Title != "Trip to Zürich" {
		t.Errorf("the list after the rename: %+v; want the second session still first, the first renamed", list.Sessions)
	}

	for _, c := range []struct {
		name, path, body string
		status           int
		code, detail     string
	}{
		{"empty", title, `{"user_id":"ren","title":"   "}`, 400, "invalid_argument", "title is empty"},
		{"too long", title, `{"user_id":"ren","title":"` + strings.Repeat("ü", 201) + `"}`, 400, "invalid_argument", "title is 201 characters; the limit is 200"},
		{"two lines", title, `{"user_id":"ren","title":"one\ntwo"}`, 400, "invalid_argument", "one line"},
		{"a typo", title, `{"user_id":"ren","titel":"x"}`, 400, "unknown_field", `"titel"`},
		{"not JSON", title, `title=x`, 400, "invalid_json", ""},
		{"no such session", "/wunder/sessions/sess_nope/title", `{"user_id":"ren","title":"x"}`, 404, "not_found", ""},
		{"another user's", title, `{"user_id":"someone-else","title":"mine now"}`, 404, "not_found", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := restDo(t, "POST", s.url+c.path, c.body, nil)
			var p struct{ Code, Detail string }
			if err := json.NewDecoder(r.Body).Decode(&p); err != nil || r.StatusCode != c.status || r.Header.Get("Content-Type") != "application/problem+json" ||
				p.Code != c.code || !strings.Contains(p.Detail, c.detail) {
				t.Errorf("%d %s %+v %v; want %d %s with %q", r.StatusCode, r.Header.Get("Content-Type"), p, err, c.status, c.code, c.detail)
			}
		})
	}
	// 200 characters is the limit, not past it.
	decodeInto(t, restDo(t, "POST", s.url+title, `{"user_id":"ren","title":"`+strings.Repeat("ü", 200)+`"}`, nil), http.StatusOK, &renamed)
	var sess struct{ Title string }
	decodeInto(t, restDo(t, "GET", s.url+"/wunder/sessions/"+first.SessionID+"?user_id=ren", "", nil), 200, &sess)
	if sess.Title != strings.Repeat("ü", 200) {
		t.Errorf("the title after the refused renames: %q", sess.Title)
	}
}
