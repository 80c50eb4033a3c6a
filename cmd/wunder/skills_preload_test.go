package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/bwrap"
)

// TestPreloadSkillsOnEveryFrontEnd: preload_skills works from REST, A2A
// (message metadata), MCP (wunder@run's argument), Connect (RunRequest)
// and from the user's own list. The skill's entry tool is offered only
// while the skill is loaded, so a question that calls it directly is
// answered by the script only when the skill was preloaded.
func TestPreloadSkillsOnEveryFrontEnd(t *testing.T) {
	bwrap.Need(t, "the preload test (it runs a skill's script)")
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key" })
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	mustStatus(t, f.uploadSkill(t, "/wunder/admin/skills/upload", buildZip(t,
		zipFile{name: "SKILL.md", data: skillDoc("pre", "Preloaded instructions.")},
		zipFile{name: "run.py", data: "def run(p):\n    return 'preloaded ok'\n"}), admin), 201)
	const ask = `call pre {}`
	const want = "preloaded ok"

	rest := func(body string, hdr map[string]string) string {
		var out struct{ Answer string }
		decodeInto(t, f.rest(t, "POST", "/wunder", body, hdr), 200, &out)
		return out.Answer
	}
	if a := rest(`{"user_id":"u1","question":"`+ask+`","stream":false}`, admin); strings.Contains(a, want) {
		t.Fatalf("the script ran without the skill loaded: %q", a)
	}
	if a := rest(`{"user_id":"u1","question":"`+ask+`","stream":false,"preload_skills":["pre"]}`, admin); !strings.Contains(a, want) {
		t.Errorf("REST preload_skills: %q", a)
	}

	res, code := f.a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"`+ask+`"}],`+
		`"metadata":{"preload_skills":["pre"]}}}`, admin)
	if code != 0 || !strings.Contains(string(res), want) {
		t.Errorf("A2A metadata preload_skills: %d %s", code, res)
	}

	hc := &http.Client{Transport: headerRT{hdr: map[string]string{"Authorization": "Bearer admin-key"}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mr, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": ask, "preload_skills": []string{"pre"}}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(mr.StructuredContent); !strings.Contains(string(b), want) {
		t.Errorf("MCP wunder@run preload_skills: %s", b)
	}

	runs := wunderv1connect.NewRunServiceClient(&http.Client{Transport: headerRT{hdr: admin}}, s.url)
	st, err := runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: "u2", Question: ask, PreloadSkills: []string{"pre"}}))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for st.Receive() {
		b, _ := json.Marshal(st.Msg().GetEvent().GetData().AsMap())
		last = string(b)
	}
	if err := st.Err(); err != nil || !strings.Contains(last, want) {
		t.Errorf("Connect preload_skills: %v %s", err, last)
	}

	// The user's own list.
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/skills?user_id=u3", `{"preload":["pre"]}`, admin), 200)
	if a := rest(`{"user_id":"u3","question":"`+ask+`","stream":false}`, admin); !strings.Contains(a, want) {
		t.Errorf("the user's preload list: %q", a)
	}
	var prompt struct{ Prompt string }
	decodeInto(t, f.rest(t, "POST", "/wunder/system_prompt", `{"user_id":"u3"}`, admin), 200, &prompt)
	if !strings.Contains(prompt.Prompt, "### Loaded skill: pre") {
		t.Errorf("the prompt preview lacks the user's preloaded skill:\n%s", prompt.Prompt)
	}
}
