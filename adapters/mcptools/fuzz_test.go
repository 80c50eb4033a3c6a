package mcptools

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzConvertResult feeds untrusted tools/call results (bytes from any
// upstream server) through the SDK's decoder and our conversion: neither
// may panic, and what decodes converts.
func FuzzConvertResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///a","text":"x"}}],"isError":true}`,
		`{"content":[],"structuredContent":{"a":1}}`,
		`{"content":[{"type":"resource_link","uri":"x","name":"n"},{"type":"audio","data":"","mimeType":"audio/wav"}]}`,
		`{"content":"not a list"}`,
		`{"content":[{"type":"resource"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var res mcp.CallToolResult
		if err := json.Unmarshal(b, &res); err != nil {
			return
		}
		out := convertResult(&res)
		if out == nil || out.IsError != res.IsError {
			t.Fatalf("convertResult(%s) = %+v", b, out)
		}
	})
}
