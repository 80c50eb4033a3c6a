package toolconfigtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// RunStoreTests runs the contract every store of run-time tool
// configuration ([toolconfig.FileStore] and
// [toolconfig.Store]) passes. newStore returns a fresh,
// empty store on every call and registers its own cleanup.
//
// Beyond the interfaces' comments the suite pins: binary data (NUL bytes,
// invalid UTF-8) round-trips exactly; packages of different owners, kinds
// and names never see each other's files; a configuration round-trips
// through JSON unchanged; of concurrent writers from one revision exactly
// one wins; [toolconfig.Configs.Update] retries until every
// writer's edit is kept.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Helper()
	tests := map[string]func(t *testing.T, s Stores){
		"FilesRoundTrip":       testFilesRoundTrip,
		"FilesReplace":         testFilesReplace,
		"FilesKeptApart":       testFilesKeptApart,
		"FilesDelete":          testFilesDelete,
		"ConfigRoundTrip":      testConfigRoundTrip,
		"ConfigRevision":       testConfigRevision,
		"ConfigConcurrentEdit": testConfigConcurrentEdit,
		"ConfigShared":         testConfigShared,
	}
	for name, fn := range tests {
		t.Run("ToolConfig/"+name, func(t *testing.T) {
			t.Parallel()
			fn(t, newStore(t))
		})
	}
}

func file(path, data string) toolconfig.File {
	return toolconfig.File{Path: path, Data: []byte(data)}
}

func listFiles(t *testing.T, s Stores, owner, kind, name string, withData bool) []toolconfig.File {
	t.Helper()
	got, err := s.ListToolFiles(t.Context(), owner, kind, name, withData)
	if err != nil {
		t.Fatalf("ListToolFiles(%q, %q, %q): %v", owner, kind, name, err)
	}
	return got
}

func paths(files []toolconfig.File) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.Name+":"+f.Path)
	}
	return out
}

func testFilesRoundTrip(t *testing.T, s Stores) {
	ctx := t.Context()
	binary := "a\x00b\xff\xfe\n中文"
	mustDo(t, "PutToolFiles", s.PutToolFiles(ctx, "alice", toolconfig.KindSkill, "demo",
		[]toolconfig.File{file("SKILL.md", "# demo"), file("bin/data.bin", binary), file("empty", "")}, false))
	got := listFiles(t, s, "alice", toolconfig.KindSkill, "demo", true)
	if want := []string{"demo:SKILL.md", "demo:bin/data.bin", "demo:empty"}; !slices.Equal(paths(got), want) {
		t.Fatalf("files = %v; want %v (ordered by path)", paths(got), want)
	}
	f := got[1]
	sum := sha256.Sum256([]byte(binary))
	if !bytes.Equal(f.Data, []byte(binary)) || f.Size != int64(len(binary)) || f.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("binary file = {data %q size %d sha %s}; want the bytes put, their size and digest", f.Data, f.Size, f.SHA256)
	}
	if f.Owner != "alice" || f.Kind != toolconfig.KindSkill || f.Name != "demo" || f.UpdatedAt.IsZero() {
		t.Errorf("file identity = %+v; want alice/skill/demo with a time", f)
	}
	if got[2].Data == nil || len(got[2].Data) != 0 {
		t.Errorf("empty file data = %v; want empty, not nil, when listed with data", got[2].Data)
	}
	for _, f := range listFiles(t, s, "alice", toolconfig.KindSkill, "demo", false) {
		if f.Data != nil || f.SHA256 == "" {
			t.Errorf("listing without data: %s has data %v, sha %q; want no data and the digest", f.Path, f.Data, f.SHA256)
		}
	}
}

func testFilesReplace(t *testing.T, s Stores) {
	ctx := t.Context()
	k := toolconfig.KindKnowledge
	mustDo(t, "PutToolFiles", s.PutToolFiles(ctx, "", k, "kb", []toolconfig.File{file("a.md", "1"), file("b.md", "2")}, false))
	mustDo(t, "PutToolFiles (merge)", s.PutToolFiles(ctx, "", k, "kb", []toolconfig.File{file("b.md", "22"), file("c.md", "3")}, false))
	got := listFiles(t, s, "", k, "kb", true)
	if want := []string{"kb:a.md", "kb:b.md", "kb:c.md"}; !slices.Equal(paths(got), want) || string(got[1].Data) != "22" {
		t.Fatalf("after a merge: %v (b.md %q); want %v with b.md overwritten", paths(got), got[1].Data, want)
	}
	mustDo(t, "PutToolFiles (replace)", s.PutToolFiles(ctx, "", k, "kb", []toolconfig.File{file("c.md", "33")}, true))
	got = listFiles(t, s, "", k, "kb", true)
	if want := []string{"kb:c.md"}; !slices.Equal(paths(got), want) || string(got[0].Data) != "33" {
		t.Fatalf("after a replace: %v; want %v", paths(got), want)
	}
	mustDo(t, "PutToolFiles (replace with none)", s.PutToolFiles(ctx, "", k, "kb", nil, true))
	if got := listFiles(t, s, "", k, "kb", false); len(got) != 0 {
		t.Fatalf("after replacing with nothing: %v; want no files", paths(got))
	}
}

func testFilesKeptApart(t *testing.T, s Stores) {
	ctx := t.Context()
	put := func(owner, kind, name string) {
		mustDo(t, "PutToolFiles", s.PutToolFiles(ctx, owner, kind, name, []toolconfig.File{file("f.md", owner+kind+name)}, true))
	}
	put("", toolconfig.KindSkill, "x")
	put("alice", toolconfig.KindSkill, "x")
	put("alice", toolconfig.KindSkill, "y")
	put("alice", toolconfig.KindKnowledge, "x")
	put("bob", toolconfig.KindSkill, "x")
	if got := paths(listFiles(t, s, "alice", toolconfig.KindSkill, "", false)); !slices.Equal(got, []string{"x:f.md", "y:f.md"}) {
		t.Errorf("alice's skills = %v; want x and y only", got)
	}
	for _, owner := range []string{"", "alice", "bob"} {
		got := listFiles(t, s, owner, toolconfig.KindSkill, "x", true)
		if len(got) != 1 || string(got[0].Data) != owner+toolconfig.KindSkill+"x" {
			t.Errorf("skill x of %q = %+v; want its own one file", owner, got)
		}
	}
	mustDo(t, "DeleteToolFiles", s.DeleteToolFiles(ctx, "alice", toolconfig.KindSkill, "x"))
	if got := listFiles(t, s, "bob", toolconfig.KindSkill, "x", false); len(got) != 1 {
		t.Errorf("deleting alice's x removed bob's: %v", paths(got))
	}
	if got := listFiles(t, s, "alice", toolconfig.KindKnowledge, "x", false); len(got) != 1 {
		t.Errorf("deleting alice's skill x removed her knowledge base x: %v", paths(got))
	}
}

func testFilesDelete(t *testing.T, s Stores) {
	ctx := t.Context()
	k := toolconfig.KindKnowledge
	mustDo(t, "PutToolFiles", s.PutToolFiles(ctx, "u", k, "kb", []toolconfig.File{file("a.md", "1"), file("b.md", "2"), file("c.md", "3")}, false))
	mustDo(t, "DeleteToolFiles(a.md, c.md)", s.DeleteToolFiles(ctx, "u", k, "kb", "a.md", "c.md"))
	if got := paths(listFiles(t, s, "u", k, "kb", false)); !slices.Equal(got, []string{"kb:b.md"}) {
		t.Fatalf("after deleting two files: %v; want b.md", got)
	}
	if err := s.DeleteToolFiles(ctx, "u", k, "kb", "a.md"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("deleting a missing file: %v; want ErrNotFound", err)
	}
	if err := s.DeleteToolFiles(ctx, "other", k, "kb"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("deleting another owner's package: %v; want ErrNotFound", err)
	}
	mustDo(t, "DeleteToolFiles(package)", s.DeleteToolFiles(ctx, "u", k, "kb"))
	if err := s.DeleteToolFiles(ctx, "u", k, "kb"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("deleting a deleted package: %v; want ErrNotFound", err)
	}
}

func sampleConfig(user string) *toolconfig.UserConfig {
	return &toolconfig.UserConfig{
		UserID: user,
		MCPServers: []toolconfig.MCPServer{{Name: "files", Config: json.RawMessage(`{"url":"https://mcp.example/mcp","headers":{"X":"1"}}`),
			SharedTools: []string{"read"}}},
		Skills:      toolconfig.Skills{Enabled: []string{"a", "写作"}, Shared: []string{}},
		Knowledge:   []toolconfig.Knowledge{{Name: "docs", Description: "product docs", Shared: false}},
		ExtraPrompt: "Answer in haiku.\x00",
	}
}

func testConfigRoundTrip(t *testing.T, s Stores) {
	ctx := t.Context()
	if _, err := s.GetUserToolConfig(ctx, "alice"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("GetUserToolConfig before any write: %v; want ErrNotFound", err)
	}
	c := sampleConfig("alice")
	mustDo(t, "PutUserToolConfig", s.PutUserToolConfig(ctx, c))
	if c.Revision != 1 || c.UpdatedAt.IsZero() {
		t.Fatalf("after the first write: revision %d, updated %v; want 1 and a time", c.Revision, c.UpdatedAt)
	}
	got, err := s.GetUserToolConfig(ctx, "alice")
	if err != nil {
		t.Fatalf("GetUserToolConfig: %v", err)
	}
	want, _ := json.Marshal(c)
	have, _ := json.Marshal(got)
	if !jsonEqual(want, have) {
		t.Errorf("round trip:\n got %s\nwant %s", have, want)
	}
}

func testConfigRevision(t *testing.T, s Stores) {
	ctx := t.Context()
	c := sampleConfig("alice")
	mustDo(t, "PutUserToolConfig", s.PutUserToolConfig(ctx, c))
	stale := *c
	c.ExtraPrompt = "second"
	mustDo(t, "PutUserToolConfig (rev 1)", s.PutUserToolConfig(ctx, c))
	stale.ExtraPrompt = "lost"
	if err := s.PutUserToolConfig(ctx, &stale); !errors.Is(err, orchestrator.ErrConflict) {
		t.Errorf("a write from a stale revision: %v; want ErrConflict", err)
	}
	fresh := sampleConfig("alice")
	if err := s.PutUserToolConfig(ctx, fresh); !errors.Is(err, orchestrator.ErrConflict) {
		t.Errorf("a second create (revision 0): %v; want ErrConflict", err)
	}
	got, _ := s.GetUserToolConfig(ctx, "alice")
	if got == nil || got.ExtraPrompt != "second" || got.Revision != 2 {
		t.Errorf("stored = %+v; want the rev-2 write kept", got)
	}
}

func testConfigConcurrentEdit(t *testing.T, s Stores) {
	ctx := t.Context()
	cfgs := toolconfig.NewConfigs(s, 0)
	const writers = 6
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cfgs.Update(ctx, "alice", func(c *toolconfig.UserConfig) error {
				c.Knowledge = append(c.Knowledge, toolconfig.Knowledge{Name: string(rune('a' + i))})
				return nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, orchestrator.ErrBusy) {
			t.Errorf("Update: %v", err)
		}
	}
	got, err := cfgs.Get(ctx, "alice")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if int(got.Revision) != len(got.Knowledge) || len(got.Knowledge) == 0 {
		t.Errorf("after %d concurrent edits: revision %d with %d bases; want one base per successful write", writers, got.Revision, len(got.Knowledge))
	}
	if _, err := cfgs.Update(ctx, "alice", func(*toolconfig.UserConfig) error { return orchestrator.ErrInvalidArgument }); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("Update whose edit fails: %v; want the edit's error", err)
	}
}

func testConfigShared(t *testing.T, s Stores) {
	ctx := t.Context()
	plain := &toolconfig.UserConfig{UserID: "carol", ExtraPrompt: "x"}
	mustDo(t, "Put carol", s.PutUserToolConfig(ctx, plain))
	mustDo(t, "Put bob", s.PutUserToolConfig(ctx, &toolconfig.UserConfig{UserID: "bob", Knowledge: []toolconfig.Knowledge{{Name: "kb", Shared: true}}}))
	mustDo(t, "Put alice", s.PutUserToolConfig(ctx, sampleConfig("alice")))
	got, err := s.ListSharedToolConfigs(ctx)
	if err != nil {
		t.Fatalf("ListSharedToolConfigs: %v", err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.UserID)
	}
	if !slices.Equal(ids, []string{"alice", "bob"}) {
		t.Fatalf("shared configurations = %v; want alice and bob (carol shares nothing)", ids)
	}
	plain.Skills.Shared = []string{"s"}
	mustDo(t, "Put carol (now sharing)", s.PutUserToolConfig(ctx, plain))
	got, _ = s.ListSharedToolConfigs(ctx)
	if len(got) != 3 {
		t.Errorf("after carol shares a skill: %d shared configurations; want 3", len(got))
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
