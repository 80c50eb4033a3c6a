package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// sseData reads events whatever their line ends and extra fields, joins
// multi-line data, and drops an event the stream cut before its blank line.
func TestSSEData(t *testing.T) {
	in := "event: message\r\nid: 1\r\ndata: {\"a\":1}\r\n\r\n" +
		": comment\n\ndata:{\"b\":\ndata: 2}\n\n" +
		"retry: 10\ndata: [1]\n\n" +
		"data: {\"cut\":true}\n"
	var got []string
	for d := range sseData(bufio.NewReaderSize(strings.NewReader(in), 16)) {
		got = append(got, string(d))
	}
	want := []string{`{"a":1}`, "{\"b\":\n2}", `[1]`}
	if !slices.Equal(got, want) {
		t.Fatalf("sseData = %q, want %q", got, want)
	}
}

// Whatever the upstream sends, sseData neither panics nor loops, and an
// event written by sse comes back as the message it carried, on one line.
func FuzzSSEData(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":\"wunder-1\",\"result\":{}}\n\n"), []byte(`{"x": [1, 2]}`))
	f.Add([]byte("data: x\r\n\r\ndata: y\n\n\n"), []byte("{\n\"a\":\r\n1}"))
	f.Fuzz(func(t *testing.T, stream, msg []byte) {
		for range sseData(bufio.NewReaderSize(bytes.NewReader(stream), 16)) {
		}
		if !json.Valid(msg) {
			return
		}
		// A one-line message goes as it is; one spanning lines is compacted.
		var want bytes.Buffer
		if bytes.ContainsAny(msg, "\r\n") {
			_ = json.Compact(&want, msg)
		} else {
			want.Write(msg)
		}
		var got [][]byte
		for d := range sseData(bufio.NewReaderSize(bytes.NewReader(sse(nil, msg)), 16)) {
			got = append(got, bytes.Clone(d))
		}
		if len(got) != 1 || !bytes.Equal(got[0], want.Bytes()) {
			t.Fatalf("sse(%q) read back as %q, want %q", msg, got, want.Bytes())
		}
	})
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
