package gateway_test

import (
	"encoding/json"
	"slices"
	"testing"
)

type toolAccessBody struct {
	Allowed  []string `json:"allowed_tools"`
	Denied   []string `json:"denied_tools"`
	Approval []string `json:"approval_tools"`
}

// A user's tool access: the admin's alone to read and set; null allowed
// means every tool not denied, an empty list none, and the other lists are
// arrays even when empty; a pattern that is no glob is refused, and
// nothing changes.
func TestAdminToolAccess(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	admin := []string{"X-API-Key", adminKey}
	alice := bearer(e.login(t, "alice", "alice-password").Token)
	const path = "/wunder/admin/user_accounts/alice/tool_access"

	raw := decode[map[string]json.RawMessage](t, e.do(t, "GET", path, "", admin...), 200)
	if string(raw["allowed_tools"]) != "null" || string(raw["denied_tools"]) != "[]" || string(raw["approval_tools"]) != "[]" {
		t.Errorf("fresh access = %s %s %s; want null [] []", raw["allowed_tools"], raw["denied_tools"], raw["approval_tools"])
	}

	set := `{"allowed_tools":["read_*","search"],"denied_tools":["exec"],"approval_tools":["write_file"]}`
	got := decode[toolAccessBody](t, e.do(t, "PUT", path, set, admin...), 200)
	want := toolAccessBody{Allowed: []string{"read_*", "search"}, Denied: []string{"exec"}, Approval: []string{"write_file"}}
	same := func(a, b toolAccessBody) bool {
		return slices.Equal(a.Allowed, b.Allowed) && slices.Equal(a.Denied, b.Denied) && slices.Equal(a.Approval, b.Approval)
	}
	if !same(got, want) {
		t.Fatalf("PUT answered %+v", got)
	}
	if got := decode[toolAccessBody](t, e.do(t, "GET", path, "", admin...), 200); !same(got, want) {
		t.Fatalf("GET after PUT = %+v", got)
	}

	for _, bad := range []string{
		`{"allowed_tools":["["]}`, `{"denied_tools":[""]}`, `{"approval_tools":["a[b"]}`,
	} {
		wantProblem(t, e.do(t, "PUT", path, bad, admin...), 400, "invalid_argument")
	}
	wantProblem(t, e.do(t, "PUT", path, `{"allowed":["x"]}`, admin...), 400, "unknown_field")
	wantProblem(t, e.do(t, "PUT", path, `{"allowed_tools":"x"}`, admin...), 400, "invalid_json")
	// A user may not read or widen their own access.
	wantProblem(t, e.do(t, "GET", path, "", alice...), 403, "permission_denied")
	wantProblem(t, e.do(t, "PUT", path, `{"allowed_tools":null}`, alice...), 403, "permission_denied")
	if got := decode[toolAccessBody](t, e.do(t, "GET", path, "", admin...), 200); !same(got, want) {
		t.Fatalf("refused changes changed the access to %+v", got)
	}

	// An empty allowed list is "no tools", kept apart from null.
	raw = decode[map[string]json.RawMessage](t, e.do(t, "PUT", path, `{"allowed_tools":[]}`, admin...), 200)
	if string(raw["allowed_tools"]) != "[]" {
		t.Errorf("allowed_tools [] came back as %s", raw["allowed_tools"])
	}
	raw = decode[map[string]json.RawMessage](t, e.do(t, "GET", path, "", admin...), 200)
	if string(raw["allowed_tools"]) != "[]" {
		t.Errorf("stored allowed_tools [] reads back as %s", raw["allowed_tools"])
	}

	wantProblem(t, e.do(t, "GET", "/wunder/admin/user_accounts/nobody/tool_access", "", admin...), 404, "not_found")
	wantProblem(t, e.do(t, "PUT", "/wunder/admin/user_accounts/nobody/tool_access", `{}`, admin...), 404, "not_found")
}

// PATCH changes only the fields it names; roles are checked; a disabled
// user's credentials stop working; a password reset is checked and ends
// the old password.
func TestAdminPatchUserAndPassword(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	admin := []string{"X-API-Key", adminKey}
	const user = "/wunder/admin/user_accounts/alice"
	type userBody struct {
		User struct {
			UserID      string   `json:"user_id"`
			DisplayName string   `json:"display_name"`
			Roles       []string `json:"roles"`
			Disabled    bool     `json:"disabled"`
		} `json:"user"`
	}
	got := decode[userBody](t, e.do(t, "PATCH", user, `{"display_name":"Alice A."}`, admin...), 200)
	if got.User.DisplayName != "Alice A." || got.User.Disabled || got.User.UserID != "alice" {
		t.Fatalf("patch display name = %+v", got.User)
	}
	got = decode[userBody](t, e.do(t, "PATCH", user, `{"roles":["admin"]}`, admin...), 200)
	if !slices.Equal(got.User.Roles, []string{"admin"}) || got.User.DisplayName != "Alice A." {
		t.Fatalf("patch roles = %+v (the display name must stay)", got.User)
	}
	wantProblem(t, e.do(t, "PATCH", user, `{"roles":["wizard"]}`, admin...), 400, "invalid_argument")
	wantProblem(t, e.do(t, "PATCH", user, `{"role":"admin"}`, admin...), 400, "unknown_field")
	wantProblem(t, e.do(t, "PATCH", "/wunder/admin/user_accounts/nobody", `{}`, admin...), 404, "not_found")

	tok := e.login(t, "alice", "alice-password").Token
	decode[userBody](t, e.do(t, "PATCH", user, `{"disabled":true}`, admin...), 200)
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer(tok)...), 401, "unauthenticated")
	decode[userBody](t, e.do(t, "PATCH", user, `{"disabled":false}`, admin...), 200)

	for _, b := range []string{`{"password":"short"}`, `{}`} {
		wantProblem(t, e.do(t, "POST", user+"/password", b, admin...), 400, "invalid_argument")
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/user_accounts/nobody/password", `{"password":"a-long-enough-one"}`, admin...), 404, "not_found")
	if r := e.do(t, "POST", user+"/password", `{"password":"a-new-password"}`, admin...); r.StatusCode != 204 {
		t.Fatalf("reset = %d", r.StatusCode)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"alice-password"}`), 401, "unauthenticated")
	// Back to a plain user, alice may not patch or reset herself.
	decode[userBody](t, e.do(t, "PATCH", user, `{"roles":[]}`, admin...), 200)
	alice := bearer(e.login(t, "alice", "a-new-password").Token)
	wantProblem(t, e.do(t, "PATCH", user, `{"roles":["admin"]}`, alice...), 403, "permission_denied")
	wantProblem(t, e.do(t, "POST", user+"/password", `{"password":"mine-mine-mine"}`, alice...), 403, "permission_denied")
}
