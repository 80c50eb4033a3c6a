package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// An admin credential naming no user on A2A is every user, as on REST:
// ListTasks shows other users' tasks, and a task it sends belongs to the
// configured default user (a2a's server.user_id). A user's credential still
// lists only their own.
func TestA2AAdminSeesEveryUsersTasks(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key" })
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	alice, bob := bearerOf(f.login(t, "alice")), bearerOf(f.login(t, "bob"))
	send := func(hdr map[string]string) string {
		res, code := f.a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, hdr)
		if code != 0 {
			t.Fatalf("SendMessage: %d", code)
		}
		var sent struct{ Task struct{ ID string } }
		if err := json.Unmarshal(res, &sent); err != nil || sent.Task.ID == "" {
			t.Fatalf("SendMessage result %s: %v", res, err)
		}
		return sent.Task.ID
	}
	aliceTask := send(alice)
	adminTask := send(admin)
	list := func(hdr map[string]string) json.RawMessage {
		res, code := f.a2a(t, "1.0", "ListTasks", `{}`, hdr)
		if code != 0 {
			t.Fatalf("ListTasks: %d", code)
		}
		return res
	}
	if all := list(admin); !bytes.Contains(all, []byte(aliceTask)) || !bytes.Contains(all, []byte(adminTask)) {
		t.Fatalf("the admin's ListTasks lacks alice's or its own task: %s", all)
	}
	if mine := list(bob); bytes.Contains(mine, []byte(aliceTask)) {
		t.Fatalf("bob's ListTasks shows alice's task: %s", mine)
	}
	var run struct {
		UserID string `json:"user_id"`
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/runs/"+adminTask, "", admin), 200, &run)
	if run.UserID != config.Default().A2A.Server.UserID {
		t.Fatalf("the admin's task belongs to %q; want the A2A default user %q", run.UserID, config.Default().A2A.Server.UserID)
	}
}
