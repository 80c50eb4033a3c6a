package knowledge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/knowledge"
)

// BenchmarkSearch is one search of the cached handbook index (15 files,
// 52 points): the fingerprint check of the directory and the BM25 query.
func BenchmarkSearch(b *testing.B) {
	s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "handbook", Path: handbook}}})
	b.Cleanup(func() { _ = s.Close() })
	tl := toolNamed(b, s, "u", "handbook")
	for _, q := range []string{"how many vacation days do I have", "出差每天补贴多少钱"} {
		b.Run(q[:6], func(b *testing.B) {
			for b.Loop() {
				search(b, tl, query(q, 5))
			}
		})
	}
}

// BenchmarkBuild parses and indexes a base of n generated files of 4
// sections each, English and Chinese.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{15, 200} {
		dir := b.TempDir()
		files := map[string]string{}
		for i := range n {
			var sb strings.Builder
			fmt.Fprintf(&sb, "# Document %d\n\n", i)
			for j := range 4 {
				fmt.Fprintf(&sb, "## Section %d.%d\n\nThe policy on topic %d covers travel, leave and expenses in detail. 第%d节说明报销、请假和差旅的规定。\n\n", i, j, i*4+j, j)
			}
			files[fmt.Sprintf("doc%03d.md", i)] = sb.String()
		}
		writeFiles(b, dir, files)
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			s := knowledge.New(&knowledge.Options{Bases: []knowledge.DirBase{{Name: "gen", Path: dir}}})
			b.Cleanup(func() { _ = s.Close() })
			for b.Loop() {
				if _, err := s.Refresh(b.Context(), "gen"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
