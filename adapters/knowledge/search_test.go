package knowledge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/knowledge"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
	"github.com/wunder/wunder/toolconfig"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

var handbook = filepath.Join("testdata", "quality", "docs")

func handbookSet(t *testing.T, o knowledge.Options) *knowledge.Set {
	t.Helper()
	o.Bases = append(o.Bases, knowledge.DirBase{Name: "handbook", Path: handbook, Description: "the staff handbook"})
	s := knowledge.New(&o)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// BM25 ranks the section that answers first, in English and in Chinese,
// and the hit carries title, heading path, content, score and source.
func TestRankingEnglishAndChinese(t *testing.T) {
	tl := toolNamed(t, handbookSet(t, knowledge.Options{}), "u", "handbook")
	cases := []struct{ q, want, path string }{
		{"how do I reset a forgotten password", "passwords.md#Resetting a forgotten password", "Passwords and accounts > Resetting a forgotten password"},
		{"printer paper jam", "printers.md#Paper jams", "Printing > Paper jams"},
		{"per diem travel allowance", "expenses.md#Per diem rates for travel", "Expense reports > Per diem rates for travel"},
		{"出差补贴标准", "报销流程.md#出差补贴标准", "差旅报销 > 出差补贴标准"},
		{"年假", "请假制度.md#年假", "请假制度 > 年假"},
		{"访客网络密码", "办公网络.md#访客网络", "办公网络 > 访客网络"},
		{"班车", "食堂与班车.md#班车路线", "食堂与班车 > 班车路线"},
		{"锁", "信息安全.md#设备丢失", "信息安全 > 设备丢失"}, // one character: the unigrams
	}
	for _, c := range cases {
		res, _ := search(t, tl, query(c.q, 3))
		if len(res.Hits) == 0 || hitID(res.Hits[0]) != c.want {
			t.Errorf("%q: hits %v, want %s first", c.q, ids(res), c.want)
			continue
		}
		h := res.Hits[0]
		if strings.Join(h.HeadingPath, " > ") != c.path || h.Content == "" || h.Score <= 0 {
			t.Errorf("%q: hit %+v, want heading path %q, content and a positive score", c.q, h, c.path)
		}
		for i := 1; i < len(res.Hits); i++ {
			if res.Hits[i].Score > res.Hits[i-1].Score {
				t.Errorf("%q: scores not descending: %v", c.q, res.Hits)
			}
		}
	}
}

// Each search emits knowledge_request {base, query, hits: [{title,
// score}]}; limit defaults to 5 and is capped at 20; the result's Data is
// the result.
func TestEventAndLimits(t *testing.T) {
	tl := toolNamed(t, handbookSet(t, knowledge.Options{}), "u", "handbook")
	res, evs := search(t, tl, `{"query":"leave"}`)
	if len(res.Hits) != knowledge.DefaultLimit {
		t.Errorf("default limit: %d hits, want %d", len(res.Hits), knowledge.DefaultLimit)
	}
	if len(evs) != 1 || evs[0].Base != "handbook" || evs[0].Query != "leave" || len(evs[0].Hits) != len(res.Hits) ||
		evs[0].Hits[0].Title != res.Hits[0].Title || evs[0].Hits[0].Score != res.Hits[0].Score {
		t.Errorf("event %+v for result %+v", evs, res)
	}
	b, _ := json.Marshal(evs[0])
	var shape map[string]any
	_ = json.Unmarshal(b, &shape)
	if _, ok := shape["hits"].([]any)[0].(map[string]any)["score"]; !ok || shape["base"] != "handbook" {
		t.Errorf("event JSON %s", b)
	}
	if res, _ := search(t, tl, `{"query":"the a of leave time day","limit":500}`); len(res.Hits) > knowledge.MaxLimit {
		t.Errorf("limit 500: %d hits, want at most %d", len(res.Hits), knowledge.MaxLimit)
	}
	if res, _ := search(t, tl, `{"query":"leave","limit":0}`); len(res.Hits) != 1 {
		t.Errorf("limit 0: %d hits, want 1 (the minimum)", len(res.Hits))
	}
	if res, _ := search(t, tl, `{"keywords":["班车","路线"]}`); len(res.Hits) == 0 || res.Hits[0].Title != "班车路线" {
		t.Errorf("keywords (the original's alternative to query): %v", ids(res))
	}
	if res, _ := search(t, tl, `{"query":"zzzqqq nothing matches"}`); res.Hits == nil || len(res.Hits) != 0 {
		t.Errorf("no match: %+v, want an empty hits list", res)
	}
	inv := &orchestrator.ToolInvocation{Arguments: json.RawMessage(`{"query":"leave"}`), Emit: func(string, any) {}}
	r, err := tl.Call(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := r.Data.(knowledge.Result); !ok || len(d.Hits) == 0 {
		t.Errorf("Data = %#v, want the knowledge.Result", r.Data)
	}
	if s := tl.Spec(); !s.ReadOnly || s.Source != orchestrator.SourceKnowledge || !strings.Contains(s.Description, "the staff handbook") {
		t.Errorf("spec %+v", s)
	}
}

// The parsed index is cached: searches of unchanged files build nothing;
// a changed, added or removed file rebuilds it once, for a directory and
// for the store; a refresh rebuilds whatever the fingerprint says.
func TestIndexCache(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "# Alpha\n\nfirst text\n"})
	store := toolconfigtest.NewMemStore()
	cfgs := toolconfig.NewConfigs(store, time.Hour)
	ctx := context.Background()
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "dir", Path: dir}}, Files: store, Configs: cfgs})
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.SetBases(ctx, "", []knowledge.BaseSpec{{Name: "up"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "", "up", "u.md", []byte("# Upsilon\n\nstored text\n")); err != nil {
		t.Fatal(err)
	}
	dirTool, upTool := toolNamed(t, s, "u", "dir"), toolNamed(t, s, "u", "up")
	builds := func() int { return knowledge.BuildCount(s) }
	for range 3 {
		search(t, dirTool, query("alpha", 5))
		search(t, upTool, query("upsilon", 5))
	}
	if n := builds(); n != 2 {
		t.Fatalf("%d builds after repeated searches of two bases, want 2", n)
	}
	// A directory: a new file, then a changed one.
	writeFiles(t, dir, map[string]string{"b.txt": "beta text"})
	if res, _ := search(t, dirTool, query("beta", 5)); len(res.Hits) != 1 || builds() != 3 {
		t.Fatalf("after adding b.txt: %v, builds %d", ids(res), builds())
	}
	future := time.Now().Add(time.Minute)
	writeFiles(t, dir, map[string]string{"a.md": "# Alpha\n\ngamma text\n"})
	_ = os.Chtimes(filepath.Join(dir, "a.md"), future, future)
	if res, _ := search(t, dirTool, query("gamma", 5)); len(res.Hits) != 1 || builds() != 4 {
		t.Fatalf("after changing a.md: %v, builds %d", ids(res), builds())
	}
	// The store: a changed file, then a removed one.
	if err := s.WriteFile(ctx, "", "up", "u.md", []byte("# Upsilon\n\ndelta text\n")); err != nil {
		t.Fatal(err)
	}
	if res, _ := search(t, upTool, query("delta", 5)); len(res.Hits) != 1 || builds() != 5 {
		t.Fatalf("after rewriting u.md: %v, builds %d", ids(res), builds())
	}
	if err := s.DeleteFile(ctx, "", "up", "u.md"); err != nil {
		t.Fatal(err)
	}
	if res, _ := search(t, upTool, query("delta", 5)); len(res.Hits) != 0 || builds() != 6 {
		t.Fatalf("after deleting u.md: %v, builds %d", ids(res), builds())
	}
	search(t, dirTool, query("gamma", 5))
	if builds() != 6 {
		t.Fatalf("builds %d, want no rebuild of an unchanged base", builds())
	}
	info, err := s.Refresh(ctx, "")
	if err != nil || len(info) != 2 || info[0].Name != "dir" || info[0].Points != 2 || builds() != 8 {
		t.Fatalf("refresh: %+v %v, builds %d", info, err, builds())
	}
}

// Many searches at once of a base whose files change build it once per
// change, and every search gets a whole index (run with -race).
func TestIndexCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "# A\n\nshared words here\n"})
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "dir", Path: dir}}, MaxCachedIndexes: 1})
	t.Cleanup(func() { _ = s.Close() })
	tl := toolNamed(t, s, "u", "dir")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := search(t, tl, query("shared words", 5))
			if len(res.Hits) != 1 {
				t.Errorf("search %d: %v", i, ids(res))
			}
		}()
	}
	wg.Wait()
	if n := knowledge.BuildCount(s); n != 1 {
		t.Errorf("%d builds for 16 concurrent searches of one unchanged base, want 1", n)
	}
}

// Another base over the cache bound evicts the least recently used; an
// evicted base is built again when searched.
func TestIndexCacheEviction(t *testing.T) {
	var bases []knowledge.DirBase
	for _, n := range []string{"one", "two", "three"} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{n + ".md": "# " + n + "\n\ntext of " + n + "\n"})
		bases = append(bases, knowledge.DirBase{Name: n, Path: dir})
	}
	s := knowledge.New(&knowledge.Options{Bases: bases, MaxCachedIndexes: 2})
	t.Cleanup(func() { _ = s.Close() })
	for _, n := range []string{"one", "two", "three", "three", "one"} {
		res, _ := search(t, toolNamed(t, s, "u", n), query(n, 5))
		if len(res.Hits) != 1 || res.Hits[0].Title != n {
			t.Fatalf("%s: %v", n, ids(res))
		}
	}
	if n := knowledge.BuildCount(s); n != 4 {
		t.Errorf("%d builds, want 4 (one was evicted by three, then searched again)", n)
	}
}

// A configured directory that is missing makes its tool answer with an
// error result the model reads; the other bases still work.
func TestMissingDirectory(t *testing.T) {
	s := handbookSet(t, knowledge.Options{Bases: []knowledge.DirBase{{Name: "gone", Path: filepath.Join(t.TempDir(), "nope")}}})
	res, err := toolNamed(t, s, "u", "gone").Call(context.Background(), &orchestrator.ToolInvocation{Arguments: json.RawMessage(`{"query":"x"}`), Emit: func(string, any) {}})
	if err != nil || !res.IsError || !strings.Contains(res.Content, "gone") {
		t.Fatalf("missing dir: %+v %v, want an error result naming the base", res, err)
	}
	if res, _ := search(t, toolNamed(t, s, "u", "handbook"), query("VPN", 1)); len(res.Hits) != 1 {
		t.Fatalf("handbook: %v", ids(res))
	}
}

func TestToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		store := toolconfigtest.NewMemStore()
		s := knowledge.New(&knowledge.Options{
			Bases: []knowledge.DirBase{{Name: "handbook", Path: handbook}},
			Files: store, Configs: toolconfig.NewConfigs(store, 0),
		})
		t.Cleanup(func() { _ = s.Close() })
		ctx := context.Background()
		for _, u := range []string{"alice", "bob"} {
			if _, err := s.SetBases(ctx, u, []knowledge.BaseSpec{{Name: "notes", Description: u + "'s notes"}, {Name: "pub", Shared: u == "alice"}}); err != nil {
				t.Fatal(err)
			}
			if err := s.WriteFile(ctx, u, "notes", "n.md", []byte("# Secret of "+u+"\n\nonly "+u+" knows this\n")); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}, orchestratortest.WithMinTools(3), orchestratortest.WithIsolation(func(t *testing.T, ts orchestrator.Toolset, a, b string) {
		names := func(u string) []string {
			tools, _ := ts.Tools(context.Background(), u)
			var out []string
			for _, tl := range tools {
				out = append(out, tl.Spec().Name)
			}
			slices.Sort(out)
			return out
		}
		want := map[string][]string{
			a: {a + "@notes", a + "@pub", "handbook"},
			b: {a + "@pub", b + "@notes", b + "@pub", "handbook"},
		}
		for _, u := range []string{a, b} {
			if got := names(u); !slices.Equal(got, want[u]) {
				t.Errorf("%s's tools %v, want %v", u, got, want[u])
			}
		}
		// b's own notes answer with b's text, never a's.
		res, _ := search(t, toolNamed(t, ts, b, b+"@notes"), query("secret knows", 5))
		if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Content, "only "+b) {
			t.Errorf("%s@notes for %s: %+v", b, b, res)
		}
		if s := toolNamed(t, ts, b, a+"@pub").Spec(); s.Owner != a || !strings.Contains(s.Description, "shared by "+a) {
			t.Errorf("shared tool spec %+v", s)
		}
	}))
}
