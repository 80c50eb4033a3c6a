package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
)

// headerTransport sets a header on every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// A JSON-RPC error's message is in the language Options.Language picks
// from the call's headers (the gateway's Accept-Language rule); its code
// does not change, and English is what it was.
func TestErrorMessageLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{Language: func(h http.Header) string {
		if h.Get("Accept-Language") == "zh-CN" {
			return "zh"
		}
		return "en"
	}})
	for _, tc := range []struct {
		name  string
		args  map[string]any
		en    string
		zh    string
		code  int64
		check bool
	}{
		{"blank task", map[string]any{"task": " "}, "task is required", "参数无效：task is required", jsonrpc.CodeInvalidParams, true},
		{"unknown session", map[string]any{"task": "t", "session_id": "sess_nope"}, "", "", jsonrpc.CodeInvalidParams, false},
	} {
		msg := map[string]string{}
		for _, lang := range []string{"en", "zh-CN"} {
			cs := connect(t, e.url+"/wunder/mcp", &http.Client{Transport: headerTransport{"Accept-Language", lang}}, nil)
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: tc.args})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != tc.code {
				t.Fatalf("%s in %s: %v; want JSON-RPC error %d", tc.name, lang, err, tc.code)
			}
			msg[lang] = rpcErr.Message
		}
		if tc.check && (msg["en"] != tc.en || msg["zh-CN"] != tc.zh) {
			t.Errorf("%s: en %q, zh %q; want %q, %q", tc.name, msg["en"], msg["zh-CN"], tc.en, tc.zh)
		}
		// A core error: the sentinel's sentence, then the English specifics.
		if rest, ok := strings.CutPrefix(msg["en"], "not found: "); !tc.check && (!ok || msg["zh-CN"] != "未找到："+rest) {
			t.Errorf("%s: en %q, zh %q; want \"not found: ...\" and \"未找到：...\"", tc.name, msg["en"], msg["zh-CN"])
		}
	}
}
