package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/bwrap"
)

// zipFile is one member of a test ZIP.
type zipFile struct {
	name, data string
	mode       fs.FileMode
}

func buildZip(t *testing.T, files ...zipFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if f.mode != 0 {
			h.SetMode(f.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(f.data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// skillDoc is a SKILL.md.
func skillDoc(name, body string, extra ...string) string {
	return "---\nname: " + name + "\ndescription: the skill " + name + "\n" + strings.Join(extra, "") + "---\n" + body + "\n"
}

// uploadSkill posts a ZIP to an upload route and returns the response.
func (f *fixture) uploadSkill(t *testing.T, path string, zipData []byte, hdr map[string]string, fields ...string) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = mw.WriteField(fields[i], fields[i+1])
	}
	if zipData != nil {
		w, _ := mw.CreateFormFile("file", "skill.zip")
		_, _ = w.Write(zipData)
	}
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.s.url+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// runAll runs a question to its end and returns its events.
func runAll(t *testing.T, s *server, token string, req client.RunRequest) []client.Event {
	t.Helper()
	var evs []client.Event
	for ev, err := range client.New(s.url, token, nil).Ask(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// csvSkill's instructions tell the model what to call; its script runs in
// the sandbox and reports where it ran and whether /skill is writable.
var csvSkill = []zipFile{
	{name: "csv-stats/SKILL.md", data: skillDoc("csv-stats",
		"# CSV statistics\n\nTo answer, call csv-stats {\"path\":\"w.csv\"} and report its result.",
		"inputs:\n  type: object\n  properties:\n    path: {type: string}\n  required: [path]\n")},
	{name: "csv-stats/run.py", data: "import csv, os\n" +
		"def run(p):\n    rows = list(csv.DictReader(open(p['path'])))\n" +
		"    try:\n        open('/skill/x', 'w')\n        ro = False\n    except OSError:\n        ro = True\n" +
		"    return {'rows': len(rows), 'cwd': os.getcwd(), 'skill_read_only': ro}\n"},
}

// TestSkillEndToEnd: an admin uploads a skill; a run loads it with
// load_skill, follows its instructions (the fake model finds what to call
// only in the loaded skill's body in the system prompt) and runs its
// entry script in the sandbox; the result is in the stream.
func TestSkillEndToEnd(t *testing.T) {
	bwrap.Need(t, "the skills end-to-end test")
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key" })
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	mustStatus(t, f.uploadSkill(t, "/wunder/admin/skills/upload", buildZip(t, csvSkill...), admin), 201)
	ws := filepath.Join(s.dir, "workspaces", "carol")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "w.csv"), []byte("city,temp\nOslo,3\nLima,19\nOslo,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"tool_call", "function_call"} {
		t.Run(mode, func(t *testing.T) {
			evs := runAll(t, s, "admin-key", client.RunRequest{UserID: "carol", Question: "please follow the skill csv-stats",
				ToolNames: []string{"load_skill"}, ToolCallMode: mode})
			final := finalOf(t, evs)
			for _, want := range []string{`"rows": 3`, `"cwd": "/workspace"`, `"skill_read_only": true`} {
				if !strings.Contains(final.Answer, want) {
					t.Errorf("answer %q lacks %s", final.Answer, want)
				}
			}
			var calls []string
			for _, ev := range evs {
				if ev.Type == "tool_call" {
					var d struct{ Tool, Name string }
					_ = json.Unmarshal(ev.Data, &d)
					calls = append(calls, d.Tool+d.Name)
				}
			}
			if strings.Join(calls, ",") != "load_skill,csv-stats" {
				t.Errorf("tool calls %v, want load_skill then csv-stats", calls)
			}
		})
	}
}

// TestSharedSkillEndToEnd: alice uploads and shares a skill; bob sees it
// as alice@probe among his shared tools, runs it in his own workspace with
// alice's files, and cannot read, list or delete alice's skill through
// the routes.
func TestSharedSkillEndToEnd(t *testing.T) {
	bwrap.Need(t, "the shared skill end-to-end test")
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Skills.AllowUserCode = true
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	alice, bob := f.login(t, "alice"), f.login(t, "bob")
	probe := buildZip(t,
		zipFile{name: "SKILL.md", data: skillDoc("probe", "To probe, call alice__probe {} and report what it says.")},
		zipFile{name: "secret.txt", data: "alice's instructions file"},
		zipFile{name: "run.py", data: "import os\ndef run(p):\n    s = open('/skill/secret.txt').read()\n" +
			"    open('probed.txt', 'w').write(s)\n    return {'read': s, 'cwd': os.getcwd()}\n"})
	mustStatus(t, f.uploadSkill(t, "/wunder/user_tools/skills/upload", probe, bearerOf(alice)), 201)
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/skills", `{"shared":["probe"]}`, bearerOf(alice)), 200)

	var cat map[string][]struct{ Name, Owner string }
	decodeInto(t, f.rest(t, "GET", "/wunder/tools", "", bearerOf(bob)), 200, &cat)
	found := false
	for _, e := range cat["shared_tools"] {
		found = found || (e.Name == "alice@probe" && e.Owner == "alice")
	}
	if !found {
		t.Fatalf("bob's shared_tools lack alice@probe: %+v", cat["shared_tools"])
	}

	evs := runAll(t, s, bob, client.RunRequest{Question: "follow the skill alice@probe", ToolNames: []string{"alice@probe"}, ToolCallMode: "function_call"})
	if a := finalOf(t, evs).Answer; !strings.Contains(a, "alice's instructions file") || !strings.Contains(a, `"cwd": "/workspace"`) {
		t.Fatalf("bob's run answered %q", a)
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, "workspaces", "bob", "probed.txt")); err != nil || string(b) != "alice's instructions file" {
		t.Errorf("bob's workspace: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "workspaces", "alice", "probed.txt")); err == nil {
		t.Error("the shared skill wrote into alice's workspace")
	}

	// Bob never reaches alice's skill files or settings through routes.
	for _, c := range []struct{ method, path string }{
		{"GET", "/wunder/user_tools/skills/content?name=alice@probe"},
		{"GET", "/wunder/user_tools/skills/content?name=probe"},
		{"DELETE", "/wunder/user_tools/skills?name=alice@probe"},
	} {
		if got := restOutcome(f.rest(t, c.method, c.path, "", bearerOf(bob))); got != denied {
			t.Errorf("bob %s %s: %s, want denied", c.method, c.path, got)
		}
	}
	for _, p := range []string{"/wunder/user_tools/skills?user_id=alice", "/wunder/user_tools/skills/content?name=probe&user_id=alice"} {
		if got := restOutcome(f.rest(t, "GET", p, "", bearerOf(bob))); got != forbidden {
			t.Errorf("bob GET %s: %s, want forbidden", p, got)
		}
	}
	if got := restOutcome(f.rest(t, "GET", "/wunder/admin/skills/content?name=probe", "", bearerOf(bob))); got != forbidden {
		t.Errorf("bob on the admin route: %s", got)
	}
	var own struct{ Skills []struct{ Name string } }
	decodeInto(t, f.rest(t, "GET", "/wunder/user_tools/skills", "", bearerOf(bob)), 200, &own)
	if len(own.Skills) != 0 {
		t.Errorf("bob's own skills list alice's: %+v", own)
	}
	var content struct{ Content string }
	decodeInto(t, f.rest(t, "GET", "/wunder/user_tools/skills/content?name=probe", "", bearerOf(alice)), 200, &content)
	if !strings.Contains(content.Content, "call alice__probe") {
		t.Errorf("alice's own content: %+v", content)
	}
}

// TestSkillRoutesRefuseBadInput: every class of bad input to the skill
// routes of the wired server gets its clear 4xx.
func TestSkillRoutesRefuseBadInput(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Skills.MaxZipBytes, c.Skills.MaxFiles = 4096, 4
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	alice, bob := bearerOf(f.login(t, "alice")), bearerOf(f.login(t, "bob"))
	good := zipFile{name: "SKILL.md", data: skillDoc("probe", "Probe.")}
	big := make([]byte, 6000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32()) // incompressible
	}
	up := "/wunder/user_tools/skills/upload"
	for _, c := range []struct {
		name   string
		data   []byte
		status int
		want   string
	}{
		{"not a zip", []byte("just text"), 400, "not a ZIP"},
		{"too big", buildZip(t, good, zipFile{name: "noise", data: string(big)}), 413, "larger than 4096"},
		{"too many files", buildZip(t, good, zipFile{name: "a", data: "1"}, zipFile{name: "b", data: "2"}, zipFile{name: "c", data: "3"}, zipFile{name: "d", data: "4"}), 400, "over the limit of 4"},
		{"zip slip", buildZip(t, good, zipFile{name: "../../evil.py", data: "x"}), 400, "leaves its package"},
		{"symlink", buildZip(t, good, zipFile{name: "passwd", data: "/etc/passwd", mode: fs.ModeSymlink | 0o777}), 400, "symbolic link"},
		{"missing SKILL.md", buildZip(t, zipFile{name: "README.md", data: "hi"}), 400, "no SKILL.md"},
		{"invalid SKILL.md", buildZip(t, zipFile{name: "SKILL.md", data: "---\nname: probe\n---\nbody\n"}), 400, "description is required"},
		{"bad skill name", buildZip(t, zipFile{name: "SKILL.md", data: skillDoc("../x", "b")}), 400, "must be 1-64"},
	} {
		resp := f.uploadSkill(t, up, c.data, alice)
		var p struct{ Detail string }
		_ = json.NewDecoder(resp.Body).Decode(&p)
		if resp.StatusCode != c.status || !strings.Contains(p.Detail, c.want) {
			t.Errorf("%s: %d %q; want %d mentioning %q", c.name, resp.StatusCode, p.Detail, c.status, c.want)
		}
	}
	mustStatus(t, f.uploadSkill(t, up, buildZip(t, good), alice), 201)
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"bad name", "GET", "/wunder/user_tools/skills/content?name=Bad%20Name", alice, 400},
		{"no name", "GET", "/wunder/user_tools/skills/content", alice, 400},
		{"unknown skill", "GET", "/wunder/user_tools/skills/content?name=ghost", alice, 404},
		{"other user's skill", "GET", "/wunder/user_tools/skills/content?name=alice@probe", bob, 404},
		{"other user's skill by plain name", "DELETE", "/wunder/user_tools/skills?name=probe", bob, 404},
		{"naming another user", "GET", "/wunder/user_tools/skills?user_id=alice", bob, 403},
		{"admin without user_id", "GET", "/wunder/user_tools/skills", admin, 400},
		{"unknown admin skill", "DELETE", "/wunder/admin/skills?name=ghost", admin, 404},
	} {
		if resp := f.rest(t, c.method, c.path, "", c.hdr); resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"enabled":["ghost"]}`, "not uploaded: ghost"},
		{`{"enabled":["probe"],"shared":["ghost"]}`, "subset of enabled"},
		{`{"preload":["bob@x"]}`, "cannot use"},
		{`{"enabled":"probe"}`, "must be"},
		{`{"enable":["probe"]}`, "unknown field"},
	} {
		resp := f.rest(t, "POST", "/wunder/user_tools/skills", c.body, alice)
		var p struct{ Detail string }
		_ = json.NewDecoder(resp.Body).Decode(&p)
		if resp.StatusCode != 400 || !strings.Contains(p.Detail, c.want) {
			t.Errorf("POST %s: %d %q; want 400 mentioning %q", c.body, resp.StatusCode, p.Detail, c.want)
		}
	}
	if resp := f.rest(t, "POST", "/wunder/admin/skills", `{"enabled":["ghost"]}`, admin); resp.StatusCode != 400 {
		t.Errorf("admin enabling ghost: %d", resp.StatusCode)
	}
}

// TestSkillMCPServerEndToEnd: a skill's own MCP server (a real go-sdk
// server over streamable HTTP) is connected while the skill is loaded,
// through the wired mcptools connector, and its tool answers the run.
func TestSkillMCPServerEndToEnd(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "wx", Version: "1"}, nil)
	type in struct {
		City string `json:"city"`
	}
	mcp.AddTool(up, &mcp.Tool{Name: "forecast", Description: "weather by city"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + a.City}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(ts.Close)

	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key" })
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	doc := skillDoc("weather", "For the weather, call wx__forecast {\"city\":\"Oslo\"} and report it.",
		"mcpServers:\n  - name: wx\n    transport: streamable-http\n    url: "+ts.URL+"\n")
	mustStatus(t, f.uploadSkill(t, "/wunder/admin/skills/upload", buildZip(t, zipFile{name: "SKILL.md", data: doc}), admin), 201)
	bad := skillDoc("weather2", "b", "mcpServers:\n  wx:\n    transport: carrier-pigeon\n")
	resp := f.uploadSkill(t, "/wunder/admin/skills/upload", buildZip(t, zipFile{name: "SKILL.md", data: bad}), admin)
	if resp.StatusCode != 400 {
		t.Errorf("a bad MCP server entry: %d", resp.StatusCode)
	}
	for _, mode := range []string{"tool_call", "function_call"} {
		evs := runAll(t, s, "admin-key", client.RunRequest{UserID: "dora", Question: "follow the skill weather", ToolNames: []string{"weather"}, ToolCallMode: mode})
		if a := finalOf(t, evs).Answer; a != "sunny in Oslo" {
			t.Errorf("%s: answer %q", mode, a)
		}
	}
	// A user's skill is held to the SSRF rules of users' own servers: a
	// loopback server is refused at upload (user_tools.allow_private_urls
	// is off), even where users' code may run.
	s2 := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key"; c.Skills.AllowUserCode = true })
	f2 := &fixture{s: s2}
	userDoc := skillDoc("myweather", "b", "mcpServers:\n  - name: wx\n    transport: streamable-http\n    url: "+ts.URL+"\n")
	resp = f2.uploadSkill(t, "/wunder/user_tools/skills/upload?user_id=erin", buildZip(t, zipFile{name: "SKILL.md", data: userDoc}), admin)
	var p struct{ Detail string }
	decodeInto(t, resp, 400, &p)
	if !strings.Contains(p.Detail, "private") && !strings.Contains(p.Detail, "loopback") {
		t.Errorf("a user's skill with a loopback MCP server: %q; want the SSRF guard's refusal", p.Detail)
	}

	// Not loaded, the server's tool is not offered.
	evs := runAll(t, s, "admin-key", client.RunRequest{UserID: "dora", Question: "call wx__forecast {\"city\":\"Oslo\"}", ToolNames: []string{"weather"}, ToolCallMode: "function_call"})
	if a := finalOf(t, evs).Answer; strings.Contains(a, "sunny") {
		t.Errorf("the skill's MCP tool ran without the skill loaded: %q", a)
	}
}
