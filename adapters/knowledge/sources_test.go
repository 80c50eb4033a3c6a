package knowledge_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/knowledge"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

// call calls a tool with raw arguments.
func call(t *testing.T, ctx context.Context, tl orchestrator.Tool, args string) (*orchestrator.ToolResult, []knowledge.RequestEvent, error) {
	t.Helper()
	var evs []knowledge.RequestEvent
	res, err := tl.Call(ctx, &orchestrator.ToolInvocation{UserID: "u", Arguments: json.RawMessage(args),
		Emit: func(_ string, data any) { evs = append(evs, data.(knowledge.RequestEvent)) }})
	return res, evs, err
}

// A directory base reads the .md and .txt files under it, in
// subdirectories too, and leaves out what docs/tools.md and the package
// doc say it does: hidden files and directories, other extensions, files
// over max_file_bytes (logged), text that is not UTF-8, and symbolic
// links, which could lead out of the directory.
func TestDirectoryBaseReadsOnlyItsDocuments(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{
		"top.md":               "# Visible\n\nalpha words\n",
		"sub/deeper/notes.txt": "beta words",
		".hidden.md":           "# Hidden\n\ngamma words\n",
		".git/info.md":         "# Hidden dir\n\ngamma words\n",
		"script.py":            "gamma = 'words'",
		"big.md":               "# Big\n\ngamma " + strings.Repeat("words ", 100),
	})
	if err := os.WriteFile(filepath.Join(dir, "latin1.txt"), []byte("gamma caf\xe9"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, outside, map[string]string{"secret.md": "# Secret\n\ngamma words\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "docs", Path: dir}}, MaxFileBytes: 200,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	t.Cleanup(func() { _ = s.Close() })
	tl := toolNamed(t, s, "u", "docs")
	if res, _ := search(t, tl, query("gamma", 20)); len(res.Hits) != 0 {
		t.Errorf("gamma found in %v; every file holding it is one the base leaves out", ids(res))
	}
	res, _ := search(t, tl, query("alpha beta words", 20))
	if got := ids(res); !slices.Equal(got, []string{"sub/deeper/notes.txt#notes", "top.md#Visible"}) &&
		!slices.Equal(got, []string{"top.md#Visible", "sub/deeper/notes.txt#notes"}) {
		t.Errorf("hits %v; want top.md and sub/deeper/notes.txt", got)
	}
	if !strings.Contains(logs.String(), "too large") || !strings.Contains(logs.String(), "big.md") || !strings.Contains(logs.String(), "not UTF-8") {
		t.Errorf("the skipped files are not logged:\n%s", logs.String())
	}
	files, err := s.Files(context.Background(), "", "docs")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
		if f.Size == 0 || f.UpdatedAt.IsZero() {
			t.Errorf("file %+v without size or time", f)
		}
	}
	// The listing is what the walk keeps: UTF-8 is checked when read.
	if want := []string{"latin1.txt", "sub/deeper/notes.txt", "top.md"}; !slices.Equal(paths, want) {
		t.Errorf("files %v; want %v", paths, want)
	}
	if _, err := s.ReadFile(context.Background(), "", "docs", "script.py"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("reading a file of another extension: %v; want not found", err)
	}
}

// A match in a point's headings weighs twice one in its text: of two
// points alike but for where the word stands (a heading's point holds it
// twice, its title and heading path), the heading's comes first,
// wherever it is in the file.
func TestHeadingMatchOutranksText(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.md": "## lorem\n\nzebra zebra ipsum dolor\n\n## zebra\n\nlorem lorem ipsum dolor\n"})
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "d", Path: dir}}})
	t.Cleanup(func() { _ = s.Close() })
	res, _ := search(t, toolNamed(t, s, "u", "d"), query("zebra", 2))
	if len(res.Hits) != 2 || res.Hits[0].Title != "zebra" || res.Hits[0].Score <= res.Hits[1].Score {
		t.Fatalf("hits %+v; want the point titled zebra first, with the higher score", res.Hits)
	}
}

// Bad arguments are a result the model reads, naming what is wrong; a
// query is bounded; a call whose context ended returns its error, not a
// result.
func TestToolArguments(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "# A\n\nwords\n"})
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "d", Path: dir}}})
	t.Cleanup(func() { _ = s.Close() })
	tl := toolNamed(t, s, "u", "d")
	for args, want := range map[string]string{
		`"just a string"`:               "must be a JSON object",
		`{"query":7}`:                   "must be a JSON object",
		`{}`:                            "query is required",
		`{"query":"   ","keywords":[]}`: "query is required",
		`{"query":"x","limit":"many"}`:  "must be a JSON object",
		`{"keywords":["", " "]}`:        "query is required",
	} {
		res, evs, err := call(t, context.Background(), tl, args)
		if err != nil || !res.IsError || !strings.Contains(res.Content, want) || len(evs) != 0 {
			t.Errorf("%s: %+v %v (events %v); want an error result saying %q and no event", args, res, err, evs, want)
		}
	}
	long := strings.Repeat("wörds ", 1000)
	res, evs, err := call(t, context.Background(), tl, `{"query":"`+long+`"}`)
	if err != nil || res.IsError || len(evs) != 1 || len([]rune(evs[0].Query)) > 2000 || !strings.HasPrefix(long, strings.TrimSpace(evs[0].Query)[:100]) {
		t.Errorf("a long query: %+v %v, event query of %d characters; want it searched, cut to 2000", res, err, len([]rune(evs[0].Query)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, _, err := call(t, ctx, tl, `{"query":"words"}`); !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("a call whose context ended: %+v %v; want context.Canceled", res, err)
	}
}

// failingConfigs is a store whose users' configurations cannot be read
// while down is set.
type failingConfigs struct {
	toolconfigtest.Stores
	down bool
}

func (f *failingConfigs) GetUserToolConfig(ctx context.Context, user string) (*toolconfig.UserConfig, error) {
	if f.down {
		return nil, fmt.Errorf("%w: store away", orchestrator.ErrUnavailable)
	}
	return f.Stores.GetUserToolConfig(ctx, user)
}

// A store that fails leaves every user the configured bases (and the
// failure in the log), not an error that would cost the run its tools.
func TestStoreFailureKeepsConfiguredBases(t *testing.T) {
	store := &failingConfigs{Stores: toolconfigtest.NewMemStore()}
	var logs bytes.Buffer
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "handbook", Path: handbook}},
		Files: store, Configs: toolconfig.NewConfigs(store, time.Nanosecond), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	if _, err := s.SetBases(ctx, "", []knowledge.BaseSpec{{Name: "faq"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "notes"}}); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		tools, err := s.Tools(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Spec().Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"alice@notes", "faq", "handbook"}) {
		t.Fatalf("tools %v with the store up", got)
	}
	store.down = true
	if got := names(); !slices.Equal(got, []string{"handbook"}) {
		t.Errorf("tools %v with the store down; want the configured base", got)
	}
	if !strings.Contains(logs.String(), "store away") {
		t.Errorf("the failure is not logged:\n%s", logs.String())
	}
}

// A configured base takes its name from an upload of the admin's made
// before it was configured: the tool searches the directory; and a user's
// base of the same name is the user's own tool.
func TestConfiguredBaseTakesItsName(t *testing.T) {
	store := toolconfigtest.NewMemStore()
	configs := toolconfig.NewConfigs(store, time.Minute)
	ctx := context.Background()
	before := knowledge.New(&knowledge.Options{Files: store, Configs: configs})
	t.Cleanup(func() { _ = before.Close() })
	if _, err := before.SetBases(ctx, "", []knowledge.BaseSpec{{Name: "handbook"}}); err != nil {
		t.Fatal(err)
	}
	if err := before.WriteFile(ctx, "", "handbook", "up.md", []byte("# Uploaded\n\nVPN from the upload\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := before.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "handbook"}}); err != nil {
		t.Fatal(err)
	}
	if err := before.WriteFile(ctx, "alice", "handbook", "mine.md", []byte("# Mine\n\nVPN of alice\n")); err != nil {
		t.Fatal(err)
	}
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "handbook", Path: handbook}}, Files: store, Configs: configs})
	t.Cleanup(func() { _ = s.Close() })
	tools, err := s.Tools(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"alice@handbook", "handbook"}) {
		t.Fatalf("tools %v; want the configured handbook once and alice's own", names)
	}
	res, _ := search(t, toolNamed(t, s, "alice", "handbook"), query("VPN", 20))
	for _, h := range res.Hits {
		if h.Source == "up.md" {
			t.Errorf("the configured base's tool searched the upload: %+v", h)
		}
	}
	res, _ = search(t, toolNamed(t, s, "alice", "alice@handbook"), query("VPN", 20))
	if len(res.Hits) != 1 || res.Hits[0].Source != "mine.md" {
		t.Errorf("alice@handbook: %v; want alice's file alone", ids(res))
	}
}

// Without a store, bases cannot be uploaded (unavailable, not a bad
// request), the admin lists the configured ones, and a user has none.
func TestWithoutAStore(t *testing.T) {
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "handbook", Path: handbook}}})
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	if _, err := s.SetBases(ctx, "", []knowledge.BaseSpec{{Name: "faq"}}); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Errorf("SetBases without a store: %v; want unavailable", err)
	}
	if bases, err := s.Bases(ctx, ""); err != nil || len(bases) != 1 || bases[0].Source != knowledge.SourceConfig || bases[0].Files == 0 {
		t.Errorf("the admin's bases: %+v %v; want the configured one with its files", bases, err)
	}
	if bases, err := s.Bases(ctx, "alice"); err != nil || len(bases) != 0 {
		t.Errorf("a user's bases: %+v %v; want none", bases, err)
	}
	if err := s.WriteFile(ctx, "alice", "notes", "a.md", []byte("x")); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("writing to a base without a store: %v; want not found", err)
	}
}

// An uploaded base reports its files and bytes; rewriting a file counts
// its new size, not both, against max_base_bytes; a file's listing
// carries its SHA-256.
func TestUploadedBaseAccounting(t *testing.T) {
	s, _ := managedSet(t, knowledge.Options{MaxBaseBytes: 100})
	ctx := context.Background()
	if _, err := s.SetBases(ctx, "alice", []knowledge.BaseSpec{{Name: "notes", Description: "mine"}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, text string }{{"a.md", strings.Repeat("a", 60)}, {"b.txt", strings.Repeat("b", 40)}} {
		if err := s.WriteFile(ctx, "alice", "notes", f.path, []byte(f.text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteFile(ctx, "alice", "notes", "a.md", []byte(strings.Repeat("c", 60))); err != nil {
		t.Errorf("rewriting a file at the base's limit: %v", err)
	}
	if err := s.WriteFile(ctx, "alice", "notes", "a.md", []byte(strings.Repeat("c", 61))); !errors.Is(err, orchestrator.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "101 bytes") {
		t.Errorf("rewriting it one byte larger: %v; want the base's limit, saying 101 bytes", err)
	}
	bases, err := s.Bases(ctx, "alice")
	if err != nil || len(bases) != 1 || bases[0].Files != 2 || bases[0].Bytes != 100 || bases[0].Description != "mine" || bases[0].Source != knowledge.SourceUpload {
		t.Fatalf("bases %+v %v; want notes with 2 files of 100 bytes", bases, err)
	}
	files, err := s.Files(ctx, "alice", "notes")
	sum := sha256.Sum256([]byte(strings.Repeat("c", 60)))
	if err != nil || len(files) != 2 || files[0].Path != "a.md" || files[0].Size != 60 || files[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("files %+v %v", files, err)
	}
	if b, err := s.ReadFile(ctx, "alice", "notes", "a.md"); err != nil || string(b) != strings.Repeat("c", 60) {
		t.Errorf("ReadFile: %q %v", b, err)
	}
	if _, err := s.ReadFile(ctx, "alice", "notes", "none.md"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("reading a file that is not there: %v", err)
	}
}

// After Close a search answers with an error result naming the base.
func TestSearchAfterClose(t *testing.T) {
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "handbook", Path: handbook}}})
	tl := toolNamed(t, s, "u", "handbook")
	search(t, tl, query("VPN", 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res, _, err := call(t, context.Background(), tl, `{"query":"VPN"}`)
	if err != nil || !res.IsError || !strings.Contains(res.Content, `"handbook"`) || !strings.Contains(res.Content, "closed") {
		t.Fatalf("a search after Close: %+v %v", res, err)
	}
}
