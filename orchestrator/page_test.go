package orchestrator_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func pager(t *testing.T, cursor string, list string, filter ...any) (orchestrator.Pager, error) {
	t.Helper()
	return orchestrator.NewPager("page_token", cursor, 10, list, filter...)
}

// A cursor carries its key to the next page of the same list and filter,
// whatever the key holds.
func TestCursorRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)
	for _, k := range []*orchestrator.PageKey{{At: at, ID: "run_x"}, {ID: "alice"}, {At: time.Unix(0, 0).UTC(), ID: "a.b"},
		{At: time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC), ID: "\x00é"}, {At: time.Date(26, 2, 3, 4, 5, 6, 7000, time.UTC), ID: "x"}} {
		first, err := pager(t, "", "runs", "u1", []orchestrator.RunState{"running"})
		if err != nil {
			t.Fatal(err)
		}
		if first.Page.After != nil || first.Page.Limit != 11 || first.Size != 10 {
			t.Fatalf("first page = %+v; want 11 items from the top", first)
		}
		c := first.Cursor(k)
		next, err := pager(t, c, "runs", "u1", []orchestrator.RunState{"running"})
		if err != nil {
			t.Fatalf("cursor of %+v: %v", k, err)
		}
		if got := next.Page.After; got == nil || !got.At.Equal(k.At) || got.ID != k.ID {
			t.Fatalf("%+v -> %q -> %+v", k, c, got)
		}
		if strings.ContainsAny(c, "+/=") {
			t.Errorf("cursor %q is not unpadded base64url", c)
		}
	}
}

// A cursor of another list or filter, and anything this server did not
// issue, is an invalid argument that names the parameter.
func TestCursorRefused(t *testing.T) {
	first, err := pager(t, "", "runs", "u1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	c := first.Cursor(&orchestrator.PageKey{At: time.Now(), ID: "run_1"})
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	for _, tc := range []struct {
		name, cursor, list string
		filter             []any
		want               string
	}{
		{"another list", c, "sessions", []any{"u1", "s1"}, "another list or filter"},
		{"another filter", c, "runs", []any{"u2", "s1"}, "another list or filter"},
		{"a filter part moved", c, "runs", []any{"u1s1", ""}, "another list or filter"},
		{"garbage", "not a cursor", "runs", []any{"u1", "s1"}, "not a cursor this server issued"},
		{"an offset", "40", "runs", []any{"u1", "s1"}, "not a cursor this server issued"},
		{"cut short", c[:len(c)-3], "runs", []any{"u1", "s1"}, "not a cursor this server issued"},
		{"an id edited", flip(len(raw) - 9), "runs", []any{"u1", "s1"}, "not a cursor this server issued"},
		{"the scope edited", flip(1), "runs", []any{"u1", "s1"}, "not a cursor this server issued"},
		{"another version", flip(0), "runs", []any{"u1", "s1"}, "not a cursor this server issued"},
	} {
		_, err := pager(t, tc.cursor, tc.list, tc.filter...)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "page_token") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewPager(%q) = %v; want an invalid argument naming page_token: %s", tc.name, tc.cursor, err, tc.want)
		}
	}
}

// CutPage keeps Size items and hands out the last one's cursor while the
// store had more; the last page has none.
func TestCutPage(t *testing.T) {
	p, err := orchestrator.NewPager("cursor", "", 2, "users")
	if err != nil {
		t.Fatal(err)
	}
	key := func(id string) *orchestrator.PageKey { return &orchestrator.PageKey{ID: id} }
	items, next := orchestrator.CutPage(p, []string{"a", "b", "c"}, key)
	if len(items) != 2 || next == "" {
		t.Fatalf("CutPage(3 of 2) = %v, %q", items, next)
	}
	q, err := orchestrator.NewPager("cursor", next, 2, "users")
	if err != nil || q.Page.After.ID != "b" {
		t.Fatalf("the next page starts after %+v, %v; want b", q.Page.After, err)
	}
	items, next = orchestrator.CutPage(q, []string{"c"}, key)
	if len(items) != 1 || next != "" {
		t.Fatalf("CutPage(1 of 2) = %v, %q; want the last page", items, next)
	}
	if items, _ := orchestrator.CutPage(q, []string(nil), key); items == nil {
		t.Fatal("CutPage(nil) = nil; want an empty page")
	}
}

// A cursor is untrusted bytes: any input is a key with an id at a time a
// store holds, or ErrInvalidArgument; never a panic.
func FuzzCursor(f *testing.F) {
	p, err := orchestrator.NewPager("cursor", "", 50, "runs", "u1")
	if err != nil {
		f.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)
	for _, k := range []*orchestrator.PageKey{{At: at, ID: "run_x"}, {ID: "alice"}, {At: time.Unix(0, 0), ID: "a.b"}} {
		f.Add(p.Cursor(k))
	}
	f.Add("")
	f.Add("%%%")
	f.Add("LjE")
	f.Fuzz(func(t *testing.T, tok string) {
		q, err := orchestrator.NewPager("cursor", tok, 50, "runs", "u1")
		if err != nil {
			if !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("NewPager(%q): %v is not an invalid argument", tok, err)
			}
			return
		}
		k := q.Page.After
		if k == nil {
			if tok != "" {
				t.Fatalf("NewPager(%q) = no key", tok)
			}
			return
		}
		if k.ID == "" {
			t.Fatalf("NewPager(%q) = a key without an id", tok)
		}
		if !k.At.IsZero() && (k.At.Year() < 1 || k.At.Year() > 9999) {
			t.Fatalf("NewPager(%q) = a key at %v, a time no store holds", tok, k.At)
		}
		again, err := orchestrator.NewPager("cursor", q.Cursor(k), 50, "runs", "u1")
		if err != nil || !again.Page.After.At.Equal(k.At) || again.Page.After.ID != k.ID {
			t.Fatalf("%+v -> %+v, %v", k, again.Page.After, err)
		}
	})
}
