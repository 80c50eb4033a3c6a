package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sse"
)

// sseMessages reads an upstream's events whatever their line ends and
// extra fields, joins multi-line data, skips events without data, and
// drops an event the stream cut before its blank line.
func TestSSEMessages(t *testing.T) {
	in := "event: message\r\nid: 1\r\ndata: {\"a\":1}\r\n\r\n" +
		": comment\n\ndata:{\"b\":\ndata: 2}\n\n" +
		"retry: 10\ndata: [1]\n\n" +
		"event: ping\n\n" +
		"data: {\"cut\":true}\n"
	var got []string
	for d := range sseMessages(io.NopCloser(strings.NewReader(in))) {
		got = append(got, string(d))
	}
	want := []string{`{"a":1}`, "{\"b\":\n2}", `[1]`}
	if !slices.Equal(got, want) {
		t.Fatalf("sseMessages = %q, want %q", got, want)
	}
}

// A message the relay writes comes back through the one reader as the
// message it carried, on one line: compacted when it spanned lines.
func TestSSEMessageRoundTrip(t *testing.T) {
	for _, msg := range []string{`{"jsonrpc":"2.0","id":"x","result":{}}`, "{\n\"a\":\r\n[1, 2]}"} {
		rec := httptest.NewRecorder()
		sw := sse.NewWriter(rec)
		if err := sw.Send(sseMessage([]byte(msg))); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		var got []string
		for d := range sseMessages(io.NopCloser(rec.Body)) {
			got = append(got, string(d))
		}
		if len(got) != 1 || got[0] != want.String() {
			t.Fatalf("%q read back as %q, want %q", msg, got, want.String())
		}
	}
}

// readMessage takes one JSON-RPC 2.0 request, notification or response,
// and refuses batches and anything else.
func TestReadMessage(t *testing.T) {
	for _, c := range []struct {
		msg  string
		kind int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, kindRequest},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`, kindRequest},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, kindNotification},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, kindResponse},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`, kindResponse},
		{`{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":-1,"message":"no"}}`, kindInvalid},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, kindInvalid},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, kindInvalid},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","result":{}}`, kindInvalid},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, kindInvalid},
		{`{"id":1,"method":"tools/list"}`, kindInvalid},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, kindInvalid},
		{`{"jsonrpc":"2.0"}`, kindInvalid},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, kindInvalid},
		{`not json`, kindInvalid},
	} {
		m, err := readMessage([]byte(c.msg))
		got := kindInvalid
		if err == nil {
			got = m.kind()
		}
		if got != c.kind {
			t.Errorf("readMessage(%s): kind %d (err %v), want %d", c.msg, got, err, c.kind)
		}
	}
}

// responseTo finds the response to a request's id however the upstream
// wrote it, and nothing else.
func TestResponseTo(t *testing.T) {
	for _, c := range []struct {
		msg, id string
		want    bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, `7`, true},
		{`{"jsonrpc":"2.0","id":"a/b","result":{}}`, `"a\/b"`, true},
		{`{"jsonrpc":"2.0","id":7.0,"error":{}}`, `7`, true},
		{`{"jsonrpc":"2.0","id":"7","result":{}}`, `7`, false},
		{`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`, `7`, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7}}`, `7`, false},
	} {
		if got := responseTo([]byte(c.msg), json.RawMessage(c.id)); got != c.want {
			t.Errorf("responseTo(%s, %s) = %v, want %v", c.msg, c.id, got, c.want)
		}
	}
}
