package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// A user's tool rule (PUT .../tool_access) hides a forbidden tool from
// /wunder/tools, the MCP catalog and the A2A extended card's skills, and a
// run naming it gets the error of an unknown tool; bob, without a rule,
// keeps it.
func TestToolAccessWired(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.MCP.Server.ExposeCatalog = true
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	alice, bob := bearerOf(f.login(t, "alice")), bearerOf(f.login(t, "bob"))
	var rule map[string]any
	decodeInto(t, f.rest(t, "PUT", "/wunder/admin/user_accounts/alice/tool_access",
		`{"allowed_tools":null,"denied_tools":["write_*"],"approval_tools":[]}`, admin), 200, &rule)
	mustStatus(t, f.rest(t, "PUT", "/wunder/admin/user_accounts/alice/tool_access", `{"denied_tools":["write_*"]}`, alice), 403)
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/user_accounts/alice/tool_access", "", admin), 200, &rule)
	if d, _ := rule["denied_tools"].([]any); len(d) != 1 || d[0] != "write_*" || rule["allowed_tools"] != nil {
		t.Fatalf("stored rule = %v", rule)
	}

	restTools := func(h map[string]string) string {
		var out map[string][]struct{ Name string }
		decodeInto(t, f.rest(t, "GET", "/wunder/tools", "", h), 200, &out)
		var names []string
		for _, g := range orchestrator.CatalogGroups {
			for _, tl := range out[g] {
				names = append(names, tl.Name)
			}
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	mcpTools := func(h map[string]string) string {
		cl := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := cl.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp", HTTPClient: &http.Client{Transport: headerRT{hdr: h}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		return strings.Join(names, ",")
	}
	cardSkills := func(h map[string]string) string {
		res, code := f.a2a(t, "1.0", "GetExtendedAgentCard", `{}`, h)
		if code != 0 {
			t.Fatalf("GetExtendedAgentCard: code %d", code)
		}
		var card struct{ Skills []struct{ ID string } }
		if err := json.Unmarshal(res, &card); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, sk := range card.Skills {
			ids = append(ids, sk.ID)
		}
		return strings.Join(ids, ",")
	}
	for name, list := range map[string]func(map[string]string) string{"/wunder/tools": restTools, "MCP catalog": mcpTools, "A2A card skills": cardSkills} {
		a, b := list(alice), list(bob)
		if strings.Contains(a, "write_file") || !strings.Contains(a, "read_file") {
			t.Errorf("%s for alice = %s; want read_file and no write_file", name, a)
		}
		if !strings.Contains(b, "write_file") {
			t.Errorf("%s for bob = %s; want write_file", name, b)
		}
	}
	r := f.rest(t, "POST", "/wunder", `{"question":"write a note","tool_names":["write_file"],"stream":false}`, alice)
	var p struct{ Code, Detail string }
	decodeInto(t, r, 400, &p)
	if p.Code != "tool_not_found" || !strings.Contains(p.Detail, "write_file") {
		t.Errorf("alice's run naming write_file = %+v; want tool_not_found", p)
	}
	mustStatus(t, f.rest(t, "POST", "/wunder", `{"question":"write a note","tool_names":["write_file"],"stream":false}`, bob), 200)
}

// a2a.server.tool_names is what A2A offers every run; a tool the admin
// denied to a user is left out of that user's runs, which go on, where
// every run of the user used to fail. Another user keeps the tool. (The
// fake model calls write_file for a question about writing, whatever it
// is offered: alice's call finds no such tool and writes nothing.)
func TestA2AToolNamesMeetTheUsersAccess(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.A2A.Server.ToolNames = []string{"write_file", "read_file"}
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	mustStatus(t, f.rest(t, "PUT", "/wunder/admin/user_accounts/alice/tool_access", `{"denied_tools":["write_file"]}`, admin), 200)
	for _, c := range []struct {
		user  string
		wrote bool
	}{{"alice", false}, {"bob", true}} {
		res, code := f.a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m-`+c.user+`","role":"ROLE_USER","parts":[{"text":"please write a note and read it back"}]}}`, bearerOf(f.login(t, c.user)))
		if code != 0 {
			t.Fatalf("%s's A2A run: code %d %s", c.user, code, res)
		}
		var sent struct {
			Task struct{ Status struct{ State string } }
		}
		if err := json.Unmarshal(res, &sent); err != nil || sent.Task.Status.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("%s's task: %s %v", c.user, res, err)
		}
		_, err := os.Stat(filepath.Join(s.dir, "workspaces", c.user, "notes.txt"))
		if wrote := err == nil; wrote != c.wrote {
			t.Errorf("%s's run wrote notes.txt: %v, want %v", c.user, wrote, c.wrote)
		}
	}
}
