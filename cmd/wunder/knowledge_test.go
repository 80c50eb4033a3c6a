package main

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
)

// handbookDir is the labelled handbook of adapters/knowledge, English and
// Chinese.
var handbookDir = filepath.Join("..", "..", "adapters", "knowledge", "testdata", "quality", "docs")

// knowledgeServer is a wired server with the handbook as a config base,
// an admin key, the rerank on with a model that cannot be reached (so
// every search falls back to the lexical order), and users alice and bob.
func knowledgeServer(t *testing.T, dsn string) (*server, *fixture) {
	t.Helper()
	s := startServer(t, func(c *config.Config) {
		if dsn != "" {
			c.Storage.Postgres.DSN = dsn
		}
		c.Security.APIKey = "admin-key"
		c.Knowledge.Bases = []config.KnowledgeBase{{Name: "handbook", Path: handbookDir, Description: "the staff handbook (English and Chinese)"}}
		broken := config.NewModel()
		broken.Provider, broken.BaseURL, broken.Model = config.ProviderLocal, "http://127.0.0.1:1/v1", "gone"
		broken.Retry.MaxAttempts = 1
		c.LLM.Models["broken"] = broken
		c.LLM.Default = "fake"
		c.Knowledge.Rerank, c.Knowledge.RerankModel, c.Knowledge.RerankTimeoutSeconds = true, "broken", 5
		c.Knowledge.MaxFileBytes, c.Knowledge.MaxBaseBytes = 4096, 6000
	})
	f := &fixture{s: s}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, adminHdr), 201)
	}
	f.alice, f.bob = f.login(t, "alice"), f.login(t, "bob")
	return s, f
}

var adminHdr = map[string]string{"X-API-Key": "admin-key"}

// upload posts one file as multipart (fields base and file).
func (f *fixture) upload(t *testing.T, path, base, name, content string, hdr map[string]string) *http.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("base", base)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write([]byte(content))
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", f.s.url+path, &buf)
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

// knowledgeRun asks the fake model to call tool (its wire name) with a
// query and returns the answer (the tool's result, verbatim) and the
// knowledge_request events.
func knowledgeRun(t *testing.T, s *server, token, user, tool, wire, q, mode string) (string, []map[string]any) {
	t.Helper()
	c := client.New(s.url, token, nil)
	args, _ := json.Marshal(map[string]any{"query": q, "limit": 3})
	req := client.RunRequest{UserID: user, Question: "call " + wire + " " + string(args), ToolNames: []string{tool}, ToolCallMode: mode}
	var evs []client.Event
	for ev, err := range c.Ask(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	var kr []map[string]any
	for _, ev := range evs {
		if ev.Type == "knowledge_request" {
			var d map[string]any
			_ = json.Unmarshal(ev.Data, &d)
			kr = append(kr, d)
		}
	}
	f := finalOf(t, evs)
	if f.State != "finished" {
		t.Fatalf("run: %+v", f)
	}
	return f.Answer, kr
}

// A run answers from a knowledge base in English and in Chinese, in both
// tool-call modes, with knowledge_request events in its stream — through
// a config base, an admin's upload and a user's own base — while the
// rerank model is unreachable (the lexical order stands).
func TestKnowledgeEndToEnd(t *testing.T) {
	s, f := knowledgeServer(t, "")
	for _, mode := range []string{"tool_call", "function_call"} {
		for _, c := range []struct{ q, want, title string }{
			{"how do I reset a forgotten password", "self-service portal", "Resetting a forgotten password"},
			{"出差补贴标准", "伙食补贴", "出差补贴标准"},
		} {
			answer, kr := knowledgeRun(t, s, f.alice, "alice", "handbook", "handbook", c.q, mode)
			if !strings.Contains(answer, c.want) || !strings.Contains(answer, `"heading_path"`) {
				t.Errorf("%s, %q: answer %q, want the hit with %q", mode, c.q, answer, c.want)
			}
			if len(kr) != 1 || kr[0]["base"] != "handbook" || kr[0]["query"] != c.q {
				t.Fatalf("%s, %q: knowledge_request events %v", mode, c.q, kr)
			}
			hits, _ := kr[0]["hits"].([]any)
			if len(hits) == 0 || hits[0].(map[string]any)["title"] != c.title || hits[0].(map[string]any)["score"].(float64) <= 0 {
				t.Errorf("%s, %q: event hits %v, want %q first with a score", mode, c.q, hits, c.title)
			}
		}
	}

	// An admin's upload: a base for everyone.
	mustStatus(t, f.rest(t, "POST", "/wunder/admin/knowledge", `{"knowledge":{"bases":[{"name":"faq","description":"questions"}]}}`, adminHdr), 200)
	mustStatus(t, f.upload(t, "/wunder/admin/knowledge/upload", "faq", "wifi.md", "# Guest Wi-Fi\n\nThe guest network is GUEST; its password changes daily at reception.\n", adminHdr), 200)
	answer, kr := knowledgeRun(t, s, f.bob, "bob", "faq", "faq", "guest wifi password", "function_call")
	if !strings.Contains(answer, "changes daily") || len(kr) != 1 {
		t.Errorf("faq for bob: %q %v", answer, kr)
	}

	// A user's own base, in Chinese.
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[{"name":"笔记","description":"my notes"}]}}`, bearerOf(f.alice)), 200)
	mustStatus(t, f.upload(t, "/wunder/user_tools/knowledge/upload", "笔记", "周报.md", "# 周报模板\n\n每周五下午提交周报，写清本周进展和下周计划。\n", bearerOf(f.alice)), 200)
	var tools map[string][]struct {
		Name     string `json:"name"`
		WireName string `json:"wire_name"`
		Owner    string `json:"owner"`
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/tools", "", bearerOf(f.alice)), 200, &tools)
	var wire string
	for _, tl := range tools["user_tools"] {
		if tl.Name == "alice@笔记" && tl.Owner == "alice" {
			wire = tl.WireName
		}
	}
	if wire == "" {
		t.Fatalf("alice@笔记 is not among alice's user_tools: %+v", tools)
	}
	answer, kr = knowledgeRun(t, s, f.alice, "alice", "alice@笔记", wire, "周报什么时候交", "tool_call")
	if !strings.Contains(answer, "每周五下午") || len(kr) != 1 || kr[0]["base"] != "alice@笔记" {
		t.Errorf("alice@笔记: %q %v", answer, kr)
	}
	found := false
	for _, g := range tools["knowledge_tools"] {
		found = found || g.Name == "handbook"
	}
	if !found {
		t.Errorf("handbook is not among knowledge_tools: %+v", tools["knowledge_tools"])
	}
}

// Each class of bad input to the knowledge routes gets its 4xx through
// the wired server, and a refused write leaves nothing behind.
func TestKnowledgeRoutesValidation(t *testing.T) {
	_, f := knowledgeServer(t, "")
	alice := bearerOf(f.alice)
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[{"name":"notes"}]}}`, alice), 200)
	mustStatus(t, f.upload(t, "/wunder/user_tools/knowledge/upload", "notes", "a.md", strings.Repeat("a", 4000), alice), 200)
	put := func(base, path, content string) *http.Response {
		b, _ := json.Marshal(map[string]string{"base": base, "path": path, "content": content})
		return f.rest(t, "PUT", "/wunder/user_tools/knowledge/file", string(b), alice)
	}
	cases := []struct {
		class string
		resp  *http.Response
		code  int
		want  string
	}{
		{"base name", put("no/tes", "x.md", "x"), 400, "knowledge base name"},
		{"base name with @", f.rest(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[{"name":"bob@notes"}]}}`, alice), 400, "'@'"},
		{"path traversal", put("notes", "../x.md", "x"), 400, "leaves its package"},
		{"absolute path", put("notes", "/x.md", "x"), 400, "absolute"},
		{"path not clean", put("notes", "a/./x.md", "x"), 400, "not clean"},
		{"extension", put("notes", "x.html", "x"), 400, "only Markdown (.md) and plain-text (.txt)"},
		{"not UTF-8", f.upload(t, "/wunder/user_tools/knowledge/upload", "notes", "x.txt", "\xff\xfe\x00", alice), 400, "not UTF-8 text"},
		{"file size", put("notes", "big.md", strings.Repeat("b", 4097)), 400, "knowledge.max_file_bytes"},
		{"base size", put("notes", "more.md", strings.Repeat("m", 2001)), 400, "knowledge.max_base_bytes"},
		{"too many bases", f.rest(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[`+strings.Repeat(`{"name":"b"},`, 40)+`{"name":"c"}]}}`, alice), 400, "knowledge.max_bases"},
		{"unknown base", put("nope", "x.md", "x"), 404, `knowledge base \"nope\"`},
		{"another user's base", f.rest(t, "GET", "/wunder/user_tools/knowledge/files?base=notes", "", bearerOf(f.bob)), 404, "not_found"},
		{"config base is read-only", f.rest(t, "PUT", "/wunder/admin/knowledge/file", `{"base":"handbook","path":"x.md","content":"x"}`, adminHdr), 409, "configuration"},
		{"admin base named like a config base", f.rest(t, "POST", "/wunder/admin/knowledge", `{"knowledge":{"bases":[{"name":"handbook"}]}}`, adminHdr), 409, "knowledge.bases"},
		{"upload not multipart", f.rest(t, "POST", "/wunder/user_tools/knowledge/upload", `{"base":"notes"}`, alice), 415, "multipart/form-data"},
		{"upload over knowledge.max_file_bytes", f.upload(t, "/wunder/user_tools/knowledge/upload", "notes", "huge.md", strings.Repeat("h", 2<<20), alice), 400, "knowledge.max_file_bytes"},
		{"upload over attachments.max_bytes", f.upload(t, "/wunder/user_tools/knowledge/upload", "notes", "huge.md", strings.Repeat("h", 10<<20+1), alice), 413, `"limit":"attachments.max_bytes"`},
		{"document over a conversion limit", f.upload(t, "/wunder/user_tools/knowledge/upload", "notes", "deep.html", strings.Repeat("<i>", 300), alice), 422, `"limit":"attachments.max_xml_depth"`},
		{"unknown file", f.rest(t, "DELETE", "/wunder/user_tools/knowledge/file?base=notes&path=none.md", "", alice), 404, "none.md"},
		{"user routes are not the admin's", f.rest(t, "GET", "/wunder/admin/knowledge", "", alice), 403, "admin only"},
	}
	for _, c := range cases {
		b, _ := io.ReadAll(c.resp.Body)
		if c.resp.StatusCode != c.code || !strings.Contains(string(b), c.want) || !strings.HasPrefix(c.resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %s, want %d problem with %q", c.class, c.resp.StatusCode, b, c.code, c.want)
		}
	}
	var files struct{ Files []string }
	decodeInto(t, f.rest(t, "GET", "/wunder/user_tools/knowledge/files?base=notes", "", alice), 200, &files)
	if strings.Join(files.Files, ",") != "a.md" {
		t.Errorf("files after refused writes: %v, want a.md alone", files.Files)
	}
}
