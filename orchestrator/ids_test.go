package orchestrator_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// The one user id rule: what every edge and the workspace accept. A user
// id is one path element of the workspace, so nothing that could leave
// it passes.
func TestValidateUserID(t *testing.T) {
	ok := []string{
		"alice", "a", "Alice.Smith", "a..b", "...", "user@example.com", "张三", "a b", "a:b",
		strings.Repeat("x", 128), strings.Repeat("é", 64), // 128 bytes of 2-byte runes
	}
	for _, id := range ok {
		if err := orchestrator.ValidateUserID(id); err != nil {
			t.Errorf("ValidateUserID(%q) = %v; want ok", id, err)
		}
	}
	bad := []struct{ id, why string }{
		{"", "required"},
		{strings.Repeat("x", 129), "longer than 128"},
		{strings.Repeat("é", 64) + "x", "longer than 128"},
		{"a\xffb", "UTF-8"},
		{"a\x00b", "control"},
		{"a\nb", "control"},
		{"a\x7fb", "control"},
		{"a\u0085b", "control"}, // C1
		{"a/b", "separator"},
		{`a\b`, "separator"},
		{"/", "separator"},
		{".", "not allowed"},
		{"..", "not allowed"},
	}
	for _, c := range bad {
		err := orchestrator.ValidateUserID(c.id)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ValidateUserID(%q) = %v; want ErrInvalidArgument saying %q", c.id, err, c.why)
		}
	}
}

// FoldUserID is the key accounts are unique by: case only, in any script.
func TestFoldUserID(t *testing.T) {
	cases := []struct{ a, b string }{
		{"Alice", "alice"},
		{"ALICE", "alice"},
		{"ÉLODIE", "élodie"},
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ"}, // final sigma folds with the others
		{"straße", "STRASSE"},  // not equal: simple folding keeps ß
		{"K", "k"},             // Kelvin sign folds to k
	}
	for _, c := range cases {
		same := orchestrator.FoldUserID(c.a) == orchestrator.FoldUserID(c.b)
		want := c.a != "straße"
		if same != want {
			t.Errorf("FoldUserID(%q) == FoldUserID(%q) is %v; want %v", c.a, c.b, same, want)
		}
	}
	// Folding is idempotent and keeps what has no case.
	for _, id := range []string{"alice", "张三", "a..b", "user_1-2"} {
		if f := orchestrator.FoldUserID(id); f != id || orchestrator.FoldUserID(f) != f {
			t.Errorf("FoldUserID(%q) = %q; want it unchanged", id, f)
		}
	}
}

// An id wunder did not issue is ErrNotFound without a store read; an
// empty one is a missing argument. The error names the kind and bounds
// the id it echoes.
func TestCheckIDs(t *testing.T) {
	long := strings.Repeat("a", 129)
	cases := []struct {
		name  string
		check func(string) error
		id    string
		want  error
	}{
		{"run ok", orchestrator.CheckRunID, "run_0123abcdXYZ-_.:", nil},
		{"run empty", orchestrator.CheckRunID, "", orchestrator.ErrInvalidArgument},
		{"run with a slash", orchestrator.CheckRunID, "run/1", orchestrator.ErrNotFound},
		{"run with a space", orchestrator.CheckRunID, "run 1", orchestrator.ErrNotFound},
		{"run with NUL", orchestrator.CheckRunID, "run\x00", orchestrator.ErrNotFound},
		{"run non-ASCII", orchestrator.CheckRunID, "run_é", orchestrator.ErrNotFound},
		{"run too long", orchestrator.CheckRunID, long, orchestrator.ErrNotFound},
		{"run at the bound", orchestrator.CheckRunID, long[:128], nil},
		{"session empty", orchestrator.CheckSessionID, "", orchestrator.ErrInvalidArgument},
		{"session percent-encoded", orchestrator.CheckSessionID, "sess%2F..", orchestrator.ErrNotFound},
		{"memory task", func(id string) error { return orchestrator.CheckID("memory task", id) }, "mem task", orchestrator.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.check(c.id)
			if c.want == nil {
				if err != nil {
					t.Fatalf("check(%q) = %v; want ok", c.id, err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("check(%q) = %v; want %v", c.id, err, c.want)
			}
			if len(err.Error()) > 100 {
				t.Errorf("error echoes %d bytes: %q", len(err.Error()), err.Error())
			}
		})
	}
	if err := orchestrator.CheckID("memory task", "x y"); !strings.Contains(err.Error(), "memory task") {
		t.Errorf("CheckID error %q does not name its kind", err)
	}
}

// NewID issues ids of the run id form: its prefix, 26 characters of the
// sortable alphabet, accepted by CheckID, and never twice.
func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := orchestrator.NewID("mem_")
		rest, ok := strings.CutPrefix(id, "mem_")
		if !ok || len(rest) != 26 || strings.ContainsFunc(rest, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefghjkmnpqrstvwxyz", r) }) {
			t.Fatalf("NewID = %q; want mem_ and 26 characters of the lower-case Crockford alphabet", id)
		}
		if err := orchestrator.CheckID("memory task", id); err != nil {
			t.Fatalf("CheckID(NewID()) = %v", err)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
}
