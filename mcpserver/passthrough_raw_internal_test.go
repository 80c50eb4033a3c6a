package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/wunder/wunder/internal/sse"
)

// A message relayed on a stream reads back, through the one reader, as
// the message it carried, on one line: compacted when it spans lines.
func FuzzMessage(f *testing.F) {
	f.Add([]byte(`{"x": [1, 2]}`))
	f.Add([]byte("{\n\"a\":\r\n1}"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		if !json.Valid(msg) {
			return
		}
		var want bytes.Buffer
		if bytes.ContainsAny(msg, "\r\n") {
			_ = json.Compact(&want, msg)
		} else {
			want.Write(msg)
		}
		rec := httptest.NewRecorder()
		if err := sse.NewWriter(rec).Send(message(msg)); err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for ev, err := range sse.Read(rec.Body) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != "message" {
				t.Fatalf("event type %q", ev.Type)
			}
			got = append(got, ev.Data)
		}
		if len(got) != 1 || !bytes.Equal(got[0], want.Bytes()) || bytes.ContainsAny(got[0], "\r\n") {
			t.Fatalf("message(%q) read back as %q, want %q", msg, got, want.Bytes())
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
