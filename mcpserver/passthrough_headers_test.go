package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
)

// The pass-through checks Mcp-Method and Mcp-Name against the body of a
// 2026-07-28 request as go-sdk's handler does: a mismatch or a missing
// header is 400 with -32020 and never reaches the upstream. Earlier
// revisions have no such headers.
func TestPassThroughStandardHeaders(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: up.url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	e := newEnv(t, mcpserver.Options{Upstreams: set})
	cs := connectAt(t, e.url+"/wunder/mcp/up", nil, nil, legacy)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"steps","arguments":{},` + meta + `}}`
	for _, hdr := range []map[string]string{
		{"Mcp-Method": "tools/call", "Mcp-Name": "block"},
		{"Mcp-Method": "tools/list", "Mcp-Name": "steps"},
		{"Mcp-Method": "tools/call"},
		{"Mcp-Name": "steps"},
	} {
		hdr["Mcp-Protocol-Version"] = current
		hdr["Mcp-Session-Id"] = cs.ID()
		status, body := post(t, e.url+"/wunder/mcp/up", hdr, call)
		if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32020`) || !strings.Contains(body, `"id":7`) {
			t.Errorf("%v: %d %s, want 400 -32020 for id 7", hdr, status, body)
		}
	}
	read := `{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"file:///a",` + meta + `}}`
	status, body := post(t, e.url+"/wunder/mcp/up", map[string]string{"Mcp-Protocol-Version": current, "Mcp-Session-Id": cs.ID(),
		"Mcp-Method": "resources/read", "Mcp-Name": "file:///b"}, read)
	if status != http.StatusBadRequest || !strings.Contains(body, "-32020") {
		t.Errorf("resources/read naming another URI: %d %s", status, body)
	}
	if got := up.received(`"tools/call"`); len(got) != 0 {
		t.Errorf("the upstream received %q", got)
	}
	if got := up.received(`"resources/read"`); len(got) != 0 {
		t.Errorf("the upstream received %q", got)
	}
	// At the session's own revision the headers are not asked for.
	status, body = post(t, e.url+"/wunder/mcp/up", map[string]string{"Mcp-Protocol-Version": legacy, "Mcp-Session-Id": cs.ID()},
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"steps","arguments":{}}}`)
	if status != http.StatusOK || !strings.Contains(body, "done") {
		t.Errorf("a %s call without the headers: %d %s", legacy, status, body)
	}
}
