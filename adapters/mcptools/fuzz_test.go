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

// FuzzSchemaDefaults feeds untrusted elicitation schemas (from any upstream
// server) to the defaults policy: it never panics, and an accepted answer
// holds every required field.
func FuzzSchemaDefaults(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"name":{"type":"string","default":"x"}},"required":["name"]}`,
		`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`,
		`{"properties":{"a":1}}`,
		`{"required":"a"}`,
		`null`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var schema any
		if err := json.Unmarshal(b, &schema); err != nil {
			return
		}
		out, ok := schemaDefaults(schema)
		if !ok {
			return
		}
		var s struct {
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(b, &s)
		for _, r := range s.Required {
			if _, has := out[r]; !has {
				t.Fatalf("schemaDefaults(%s) accepted without required %q", b, r)
			}
		}
	})
}
