package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/knowledge"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

func managedSet(t *testing.T, o knowledge.Options) (*knowledge.Set, toolconfigtest.Stores) {
	t.Helper()
	store := toolconfigtest.NewMemStore()
	o.Files, o.Configs = store, toolconfig.NewConfigs(store, time.Minute)
	o.Bases = append(o.Bases, knowledge.DirBase{Name: "handbook", Path: handbook})
	s := knowledge.New(&o)
	t.Cleanup(func() { _ = s.Close() })
	return s, store
}

// Every class of bad input is refused with the sentinel its HTTP status
// comes from, and nothing is written.
func TestManageValidation(t *testing.T) {
	ctx := context.Background()
	s, store := managedSet(t, knowledge.Options{MaxFileBytes: 100, MaxBaseBytes: 150, MaxBases: 2})
	if _, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "notes"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "alice", "notes", "a.md", []byte(strings.Repeat("a", 90))); err != nil {
		t.Fatal(err)
	}
	bad := orchestrator.ErrInvalidArgument
	cases := []struct {
		name string
		err  error
		want error
		msg  string
	}{
		{"base name with a space", s.WriteFile(ctx, "alice", "my notes", "a.md", nil), bad, "knowledge base name"},
		{"base name with @", s.WriteFile(ctx, "alice", "bob@notes", "a.md", nil), bad, "'@'"},
		{"path traversal", s.WriteFile(ctx, "alice", "notes", "../x.md", []byte("x")), bad, "leaves its package"},
		{"absolute path", s.WriteFile(ctx, "alice", "notes", "/etc/x.md", []byte("x")), bad, "absolute"},
		{"backslash", s.WriteFile(ctx, "alice", "notes", `a\b.md`, []byte("x")), bad, `'\'`},
		{"not .md or .txt", s.WriteFile(ctx, "alice", "notes", "x.pdf", []byte("x")), bad, "only Markdown"},
		{"not UTF-8", s.WriteFile(ctx, "alice", "notes", "x.md", []byte{0xff, 0xfe}), bad, "not UTF-8"},
		{"NUL byte", s.WriteFile(ctx, "alice", "notes", "x.txt", []byte("a\x00b")), bad, "not UTF-8"},
		{"file too large", s.WriteFile(ctx, "alice", "notes", "x.md", []byte(strings.Repeat("x", 101))), bad, "knowledge.max_file_bytes"},
		{"base too large", s.WriteFile(ctx, "alice", "notes", "y.md", []byte(strings.Repeat("y", 61))), bad, "knowledge.max_base_bytes"},
		{"unknown base", s.WriteFile(ctx, "alice", "nope", "x.md", []byte("x")), orchestrator.ErrNotFound, `"nope"`},
		{"another user's base (write)", s.WriteFile(ctx, "bob", "notes", "x.md", []byte("x")), orchestrator.ErrNotFound, `"notes"`},
		{"another user's base (delete)", s.DeleteFile(ctx, "bob", "notes", "a.md"), orchestrator.ErrNotFound, `"notes"`},
		{"unknown file", s.DeleteFile(ctx, "alice", "notes", "none.md"), orchestrator.ErrNotFound, "none.md"},
		{"config base is read-only", s.WriteFile(ctx, "", "handbook", "x.md", []byte("x")), orchestrator.ErrConflict, "configuration"},
		{"config base for a user is unknown", s.WriteFile(ctx, "alice", "handbook", "x.md", []byte("x")), orchestrator.ErrNotFound, "handbook"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) || !strings.Contains(c.err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v mentioning %s", c.name, c.err, c.want, c.msg)
		}
	}
	_, err := s.ReadFile(ctx, "bob", "notes", "a.md")
	if !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("bob reads alice's file: %v, want not found", err)
	}
	if _, err := s.Files(ctx, "bob", "notes"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("bob lists alice's files: %v, want not found", err)
	}
	lists := []struct {
		name  string
		owner string
		specs []knowledge.BaseSpec
		want  error
		msg   string
	}{
		{"too many bases", "alice", []knowledge.BaseSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}}, bad, "knowledge.max_bases"},
		{"twice", "alice", []knowledge.BaseSpec{{Name: "a"}, {Name: "a"}}, bad, "twice"},
		{"bad name", "alice", []knowledge.BaseSpec{{Name: ".hidden"}}, bad, "may not start"},
		{"long description", "alice", []knowledge.BaseSpec{{Name: "a", Description: strings.Repeat("d", 1001)}}, bad, "description"},
		{"admin base named like a config base", "", []knowledge.BaseSpec{{Name: "handbook"}}, orchestrator.ErrConflict, "configuration"},
	}
	for _, c := range lists {
		if _, err := s.SetBases(ctx, c.owner, c.specs); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v mentioning %s", c.name, err, c.want, c.msg)
		}
	}
	files, _ := store.ListToolFiles(ctx, "alice", toolconfig.KindKnowledge, "", false)
	if len(files) != 1 || files[0].Path != "a.md" {
		t.Errorf("alice's files after refused writes: %+v, want a.md alone", files)
	}
}

// The admin sees the configured bases (read-only, with their files) and
// its uploads; a user sees their own; dropping a base from the list
// deletes its files; the admin's bases are for everyone, never "shared".
func TestManageBases(t *testing.T) {
	ctx := context.Background()
	s, store := managedSet(t, knowledge.Options{})
	got, err := s.SetBases(ctx, "", []knowledge.BaseSpec{{Name: "faq", Description: "questions", Shared: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Source != knowledge.SourceConfig || got[0].Files != 15 || got[0].Root == "" ||
		got[1].Name != "faq" || got[1].Source != knowledge.SourceUpload || got[1].Shared {
		t.Fatalf("admin bases %+v", got)
	}
	if err := s.WriteFile(ctx, "", "faq", "q.md", []byte("# Q\n\nanswer\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := s.ReadFile(ctx, "", "handbook", "vpn.md"); err != nil || !strings.Contains(string(b), "VPN") {
		t.Errorf("admin reads a config base's file: %v", err)
	}
	if _, err := s.ReadFile(ctx, "", "handbook", "../search_test.go"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("traversal out of a config base: %v", err)
	}
	if fs, err := s.Files(ctx, "", "faq"); err != nil || len(fs) != 1 || fs[0].Size != int64(len("# Q\n\nanswer\n")) || fs[0].SHA256 == "" {
		t.Errorf("admin files %+v %v", fs, err)
	}
	// Every user (and none) sees the admin's base as a tool named after it.
	for _, u := range []string{"alice", ""} {
		res, _ := search(t, toolNamed(t, s, u, "faq"), query("answer", 5))
		if len(res.Hits) != 1 {
			t.Errorf("faq for %q: %v", u, ids(res))
		}
	}
	// A user's list.
	if _, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "notes", Shared: true}, {Name: "old"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "alice", "old", "o.txt", []byte("old text")); err != nil {
		t.Fatal(err)
	}
	bases, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "notes", Shared: true}})
	if err != nil || len(bases) != 1 || bases[0].Name != "notes" || !bases[0].Shared {
		t.Fatalf("alice's bases %+v %v", bases, err)
	}
	if fs, _ := store.ListToolFiles(ctx, "alice", toolconfig.KindKnowledge, "old", false); len(fs) != 0 {
		t.Errorf("files of a dropped base remain: %+v", fs)
	}
	if _, err := s.Refresh(ctx, "nope"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("refresh of an unknown base: %v", err)
	}
	if _, err := s.Refresh(ctx, "notes"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("refresh of a user's base (the admin refreshes global bases): %v", err)
	}
}

// failingDelete is a store whose deletes fail while down is set.
type failingDelete struct {
	toolconfigtest.Stores
	down bool
}

func (f *failingDelete) DeleteToolFiles(ctx context.Context, owner, kind, name string, paths ...string) error {
	if f.down {
		return fmt.Errorf("%w: store away", orchestrator.ErrUnavailable)
	}
	return f.Stores.DeleteToolFiles(ctx, owner, kind, name, paths...)
}

// Taking a base off the list deletes its files; when that fails the
// client is told so (not a log line), and posting the list again
// finishes the job.
func TestRemovedBaseFilesAreDeletedOrReported(t *testing.T) {
	mem := toolconfigtest.NewMemStore()
	store := &failingDelete{Stores: mem}
	s := knowledge.New(&knowledge.Options{Files: store, Configs: toolconfig.NewConfigs(store, time.Minute)})
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	if _, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "a"}, {Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"a", "b"} {
		if err := s.WriteFile(ctx, "alice", b, "x.md", []byte("# x\n\ntext")); err != nil {
			t.Fatal(err)
		}
	}
	store.down = true
	if _, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "a"}}); !errors.Is(err, orchestrator.ErrUnavailable) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("SetBases with deletes failing: %v; want an unavailable error naming b", err)
	}
	store.down = false
	if _, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "a"}}); err != nil {
		t.Fatalf("posting the list again: %v", err)
	}
	left, _ := mem.ListToolFiles(ctx, "alice", toolconfig.KindKnowledge, "", false)
	if len(left) != 1 || left[0].Name != "a" {
		t.Errorf("files left: %+v; want only a's", left)
	}
}
