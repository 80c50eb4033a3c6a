package lsp

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := codec{maxBody: 1 << 10}
	for _, v := range []any{map[string]any{"a": "中文"}, []int{1, 2}} {
		if err := c.WriteObject(&buf, v); err != nil {
			t.Fatal(err)
		}
	}
	// Headers in any case, extra headers, a body with trailing spaces.
	buf.WriteString("content-length: 4\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n1   ")
	r := bufio.NewReader(&buf)
	var a map[string]any
	var b []int
	var n int
	if err := c.ReadObject(r, &a); err != nil || a["a"] != "中文" {
		t.Fatalf("first: %v %v", a, err)
	}
	if err := c.ReadObject(r, &b); err != nil || len(b) != 2 {
		t.Fatalf("second: %v %v", b, err)
	}
	if err := c.ReadObject(r, &n); err != nil || n != 1 {
		t.Fatalf("third: %v %v", n, err)
	}
}

// FuzzReadMessage feeds arbitrary server output to the framing reader: it
// must return an error or a body within the limit, never panic or read past
// the limit.
func FuzzReadMessage(f *testing.F) {
	for _, s := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 99999999999\r\n\r\n",
		"X: " + strings.Repeat("a", 2000) + "\r\n\r\n",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 3\r\n\r\n{}",
		"\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for range 4 {
			body, err := readMessage(r, 1<<10)
			if err != nil {
				return
			}
			if len(body) > 1<<10 {
				t.Fatalf("body of %d bytes over the limit", len(body))
			}
		}
	})
}
