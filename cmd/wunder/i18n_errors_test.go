package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

func TestCLILanguage(t *testing.T) {
	for _, tc := range []struct{ wunder, lang, want string }{
		{"", "zh_CN.UTF-8", "zh-CN"},
		{"", "en_US.UTF-8", "en-US"},
		{"", "de_DE@euro", "de-DE"},
		{"", "C", ""},
		{"", "POSIX", ""},
		{"", "", ""},
		{"zh", "en_US.UTF-8", "zh"},
	} {
		env := map[string]string{"WUNDER_LANGUAGE": tc.wunder, "LANG": tc.lang}
		if got := cliLanguage(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("WUNDER_LANGUAGE=%q LANG=%q: %q, want %q", tc.wunder, tc.lang, got, tc.want)
		}
	}
}

// wunder run prints the server's problem in the language of $LANG (or
// $WUNDER_LANGUAGE), and in English without one.
func TestRunCommandLocalizedError(t *testing.T) {
	s := startServer(t, nil)
	t.Setenv("WUNDER_LANGUAGE", "")
	for _, tc := range []struct{ lang, want string }{
		{"zh_CN.UTF-8", "400 tool_not_found: 未找到工具："},
		{"C", "400 tool_not_found: tool not found: "},
	} {
		t.Setenv("LANG", tc.lang)
		code, _, errs := runCLI(t, t.Context(), "run", "--server", s.url, "--tools", "nope", "hi")
		if code != exitFailure || !strings.Contains(errs, tc.want) {
			t.Errorf("LANG=%s: exit %d, stderr %q; want %q", tc.lang, code, errs, tc.want)
		}
	}
}

// The wired server: i18n.default_language decides a problem's language
// when the request names none; A2A and MCP answer a JSON-RPC error in the
// language of Accept-Language, through i18n.aliases.
func TestErrorLanguagesWired(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.I18n.DefaultLanguage = "zh"
		c.I18n.Aliases = map[string]string{"mandarin": "zh"}
		c.A2A.Server.Enabled = true
		c.MCP.Server.Enabled = true
	})
	post := func(path, body string, hdr ...string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", s.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// Problem JSON: the default, then Accept-Language over it.
	var p struct{ Title, Detail, Code string }
	code, b := post("/wunder", `{"user_id":"u"}`)
	if json.Unmarshal(b, &p); code != 400 || p.Title != "请求错误" || p.Detail != "缺少 question" {
		t.Errorf("default zh: %d %s", code, b)
	}
	code, b = post("/wunder", `{"user_id":"u"}`, "Accept-Language", "en")
	if json.Unmarshal(b, &p); code != 400 || p.Title != "Bad Request" || p.Detail != "question is required" {
		t.Errorf("default zh, Accept-Language en: %d %s", code, b)
	}

	// A2A: an unknown task, in zh by the alias, in English by the header.
	var out struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	const getTask = `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"run_nope"}}`
	_, b = post("/a2a", getTask, "Accept-Language", "mandarin")
	if json.Unmarshal(b, &out); out.Error.Code != -32001 || out.Error.Message != "未找到任务" {
		t.Errorf("A2A GetTask, Accept-Language mandarin: %s", b)
	}
	_, b = post("/a2a", getTask, "Accept-Language", "en-GB")
	if json.Unmarshal(b, &out); out.Error.Code != -32001 || out.Error.Message != "task not found" {
		t.Errorf("A2A GetTask, Accept-Language en-GB: %s", b)
	}

	// MCP's pass-through route of an unknown upstream: a problem.
	code, b = post("/wunder/mcp/nope", `{}`, "Accept-Language", "zh")
	if json.Unmarshal(b, &p); code != 404 || p.Code != "not_found" || p.Title != "未找到" ||
		p.Detail != `未找到：no MCP server "nope" is configured for pass-through` {
		t.Errorf("MCP pass-through of an unknown upstream in zh: %d %s", code, b)
	}

	// MCP: a blank task, through the gateway's rule.
	for lang, want := range map[string]string{"mandarin": "参数无效：task is required", "en": "task is required", "": "参数无效：task is required"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp",
			HTTPClient: &http.Client{Transport: acceptLanguageRT(lang)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": " "}})
		_ = cs.Close()
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Message != want {
			t.Errorf("MCP blank task, Accept-Language %q: %v; want %q", lang, err, want)
		}
	}
}

type acceptLanguageRT string

func (l acceptLanguageRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if l != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Accept-Language", string(l))
	}
	return http.DefaultTransport.RoundTrip(r)
}
