package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// knowledgeRows are the isolation matrix's rows of knowledge bases. Alice
// has two bases: notes, which she shares (it is the tool alice@notes for
// everyone), and diary, which she does not. Sharing shares searching,
// never the files: bob can run alice@notes, but cannot list, read, upload
// to or delete from either base through the routes — there his requests
// reach his own bases, where alice's are not found.
func (f *fixture) knowledgeRows() []matrixRow {
	var once sync.Once
	setup := func(t *testing.T) {
		once.Do(func() {
			alice := bearerOf(f.alice)
			mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/knowledge",
				`{"knowledge":{"bases":[{"name":"notes","description":"alice's notes","shared":true},{"name":"diary"}]}}`, alice), 200)
			for base, files := range map[string][]string{"notes": {"n.md", "del1.md", "del2.md"}, "diary": {"d.md"}} {
				for _, name := range files {
					mustStatus(t, f.upload(t, "/wunder/user_tools/knowledge/upload", base, name, "# "+base+"\n\nthe secret word of "+base+" is marmalade\n", alice), 200)
				}
			}
		})
	}
	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	const kb = "/wunder/user_tools/knowledge"
	naming := func(path, user string) string {
		if user == "" {
			return path
		}
		return path + sep(path) + "user_id=" + user
	}
	route := func(resource, action, method, path, body string, outcome func(*http.Response) string) {
		rows = append(rows, matrixRow{frontend: "REST", resource: resource, action: action, want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				p := path
				if method == "DELETE" && c.name != "alice" {
					p = strings.Replace(p, "del1", "del2", 1) // alice deleted del1; the others try del2
				}
				return outcome(f.rest(t, method, naming(p, c.names), body, c.hdr))
			}})
	}
	route("knowledge bases", "list", "GET", kb, "", func(r *http.Response) string { return listOutcome(r, `"notes"`) })
	route("knowledge files (shared base)", "list", "GET", kb+"/files?base=notes", "", restOutcome)
	route("knowledge file (shared base)", "read", "GET", kb+"/file?base=notes&path=n.md", "", restOutcome)
	route("knowledge file (private base)", "read", "GET", kb+"/file?base=diary&path=d.md", "", restOutcome)
	route("knowledge file", "write", "PUT", kb+"/file", `{"base":"notes","path":"w.md","content":"# W"}`, restOutcome)
	route("knowledge file", "delete", "DELETE", kb+"/file?base=notes&path=del1.md", "", restOutcome)
	rows = append(rows, matrixRow{frontend: "REST", resource: "knowledge file", action: "upload", want: std,
		try: func(t *testing.T, c caller) string {
			setup(t)
			return restOutcome(f.upload(t, naming(kb+"/upload", c.names), "notes", "u.md", "# U", c.hdr))
		}})
	// Searching through the route tests retrieval on one's own bases: bob's
	// request reaches his own bases, where alice's notes are not found.
	rows = append(rows, matrixRow{frontend: "REST", resource: "knowledge base (shared base)", action: "search (GET .../knowledge/search)", want: std,
		try: func(t *testing.T, c caller) string {
			setup(t)
			return listOutcome(f.rest(t, "GET", naming(kb+"/search?base=notes&query=secret+word", c.names), "", c.hdr), "marmalade")
		}})
	// Searching in a run: the shared base is bob's to search, the private
	// one is not in his catalog.
	run := func(resource, tool, wire string, want [4]string) {
		rows = append(rows, matrixRow{frontend: "REST", resource: resource, action: "search in a run (POST /wunder)", want: want,
			try: func(t *testing.T, c caller) string {
				setup(t)
				body := map[string]any{"question": `call ` + wire + ` {"query":"secret word"}`, "tool_names": []string{tool}, "stream": false}
				if c.names != "" {
					body["user_id"] = c.names
				}
				b, _ := json.Marshal(body)
				return runOutcome(f.rest(t, "POST", "/wunder", string(b), c.hdr), "marmalade")
			}})
	}
	run("knowledge base shared (alice@notes)", "alice@notes", "alice__notes", [4]string{ok, ok, forbidden, ok})
	run("knowledge base private (alice@diary)", "alice@diary", "alice__diary", std)
	// MCP's aggregated catalog offers the same tools: bob's holds the
	// shared base only.
	for _, b := range []struct {
		resource, tool string
		want           [4]string
	}{
		{"knowledge base shared (alice@notes)", "alice__notes", [4]string{ok, ok, na, ok}}, // the API key acts as mcp.server.user_id, whom it is shared with too
		{"knowledge base private (alice@diary)", "alice__diary", [4]string{ok, denied, na, denied}},
	} {
		rows = append(rows, matrixRow{frontend: "MCP", resource: b.resource, action: "search (catalog " + b.tool + ")", want: b.want,
			try: func(t *testing.T, c caller) string {
				setup(t)
				if c.names != "" && c.hdr["X-API-Key"] == "" {
					return na
				}
				return f.mcpCall(t, c, b.tool, map[string]any{"query": "secret word"})
			}})
	}
	return rows
}

// runOutcome reads a JSON run answer: an answer holding want reached the
// base; a tool the caller's catalog lacks is denied.
func runOutcome(r *http.Response, want string) string {
	b, _ := io.ReadAll(r.Body)
	var res struct {
		Answer string `json:"answer"`
		Code   string `json:"code"`
	}
	_ = json.Unmarshal(b, &res)
	switch {
	case r.StatusCode == http.StatusOK && strings.Contains(res.Answer, want):
		return ok
	case r.StatusCode == http.StatusBadRequest && res.Code == "tool_not_found":
		return denied
	case r.StatusCode == http.StatusForbidden:
		return forbidden
	}
	return "HTTP " + http.StatusText(r.StatusCode) + " " + res.Code + " " + res.Answer
}
