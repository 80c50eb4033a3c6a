package orchestrator_test

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// A page token is untrusted bytes: any input decodes to a key with an id,
// or to ErrInvalidArgument, and a key survives its token.
func FuzzPageToken(f *testing.F) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)
	for _, k := range []*orchestrator.PageKey{{At: at, ID: "run_x"}, {ID: "alice"}, {At: time.Unix(0, 0), ID: "a.b"}} {
		f.Add(k.Token())
	}
	f.Add("")
	f.Add("%%%")
	f.Add("LjE")
	for _, at := range []string{"-9223372036854775807", "-62135596800000001", "253402300800000000"} {
		f.Add(base64.RawURLEncoding.EncodeToString([]byte(at + ".run_x"))) // a time no store holds
	}
	f.Fuzz(func(t *testing.T, tok string) {
		k, err := orchestrator.ParsePageToken(tok)
		if err != nil {
			if !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("ParsePageToken(%q): %v is not an invalid argument", tok, err)
			}
			return
		}
		if k.ID == "" {
			t.Fatalf("ParsePageToken(%q) = a key without an id", tok)
		}
		if !k.At.IsZero() && (k.At.Year() < 1 || k.At.Year() > 9999) {
			t.Fatalf("ParsePageToken(%q) = a key at %v, a time no store holds", tok, k.At)
		}
		again, err := orchestrator.ParsePageToken(k.Token())
		if err != nil || !again.At.Equal(k.At) || again.ID != k.ID {
			t.Fatalf("%+v -> %q -> %+v, %v", k, k.Token(), again, err)
		}
	})
}
