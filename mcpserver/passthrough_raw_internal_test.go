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

// The raw path takes only what the SDK path would accept alike; anything
// else is left to the SDK handler.
func TestRawEnvelopeChecks(t *testing.T) {
	for _, c := range []struct {
		params string
		ok     bool
	}{
		{`{"name":"x"}`, true},
		{`{"_meta":{"progressToken":"t"}}`, true},
		{`{"_meta":{"progressToken":-3}}`, true},
		{`{"_meta":{}}`, true},
		{`{"_meta":{"progressToken":{"a":1}}}`, false},
		{`{"_meta":{"progressToken":[1]}}`, false},
		{`{"_meta":{"progressToken":true}}`, false},
		{`{"_meta":{"progressToken":null}}`, false},
		{`{"_meta":null}`, false},
		{`[1]`, false},
		{`null`, false},
	} {
		if got := rawProgressTokenOK(json.RawMessage(c.params)); got != c.ok {
			t.Errorf("rawProgressTokenOK(%s) = %v, want %v", c.params, got, c.ok)
		}
	}
	for _, c := range []struct {
		msg string
		ok  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, true},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, false},
		{`{"id":1,"method":"tools/list"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":1}`, false},
		{`{"jsonrpc":"2.0","ID":1,"method":"tools/list"}`, false},
	} {
		var m envelope
		if err := json.Unmarshal([]byte(c.msg), &m); err != nil {
			t.Fatal(err)
		}
		if got := m.valid(); got != c.ok {
			t.Errorf("valid(%s) = %v, want %v", c.msg, got, c.ok)
		}
	}
}
