package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/wunder/wunder/internal/config"
)

// A quiet HTTP/2 connection is pinged after server.http2_ping_s: the
// keep-alive of gRPC streams, which have no comments to send. The client
// here speaks h2c (prior knowledge) frame by frame, as a gRPC client's
// connection does, and then says nothing.
func TestQuietHTTP2ConnectionIsPinged(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Server.HTTP2PingSeconds = 1 })
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, bufio.NewReader(conn))
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	// The deadline bounds the wait for a ping due after 1 s of quiet; it
	// is not what the test measures.
	if err := conn.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no PING on a quiet connection: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := fr.WriteSettingsAck(); err != nil {
					t.Fatal(err)
				}
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				return
			}
		}
	}
}
