package sse

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// reference is the wire format written the plain way: line breaks
// normalised to LF, then one data: line per line.
func reference(ev Event) string {
	var b strings.Builder
	noBreaks := strings.NewReplacer("\r", "", "\n", "")
	if ev.ID != "" {
		b.WriteString("id: " + noBreaks.Replace(ev.ID) + "\n")
	}
	if ev.Type != "" {
		b.WriteString("event: " + noBreaks.Replace(ev.Type) + "\n")
	}
	if ev.Retry > 0 {
		b.WriteString("retry: " + strconv.FormatInt(ev.Retry.Milliseconds(), 10) + "\n")
	}
	data := strings.ReplaceAll(strings.ReplaceAll(string(ev.Data), "\r\n", "\n"), "\r", "\n")
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	return b.String() + "\n"
}

// appendEvent, which formats in place without copies, writes what the
// plain way writes, for any id, type and data.
func FuzzAppendEvent(f *testing.F) {
	for _, s := range [][3]string{
		{"7", "tool\nresult", "a\nb\r\nc"}, {"", "", ""}, {"1", "x", "a\r"}, {"1", "x", "\r\n\r\n"},
		{"\r\n", "\r", "a\rb\nc\r\n"}, {"12", "final", `{"answer":"hi"}`}, {"", "e", "\n"},
	} {
		f.Add(s[0], s[1], []byte(s[2]), int64(0))
	}
	f.Add("3", "progress", []byte("x"), int64(1500))
	f.Fuzz(func(t *testing.T, id, typ string, data []byte, retryMS int64) {
		ev := Event{ID: id, Type: typ, Data: data, Retry: time.Duration(retryMS) * time.Millisecond}
		if got, want := string(appendEvent([]byte("prefix"), ev)), "prefix"+reference(ev); got != want {
			t.Fatalf("appendEvent(%q, %q, %q) =\n%q\nwant\n%q", id, typ, data, got, want)
		}
	})
}
