package knowledge

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// The analyzer of both fields: Unicode word segmentation, full-width
// forms folded, lower case, English possessives, stop words and Snowball
// stems, then CJK bigrams with unigrams (so a one-character query such as
// "锁" still matches, and a two-character word matches as one term).
const (
	analyzerName = "wunder_text"
	bigramName   = "wunder_cjk_bigram"
	fieldHeading = "heading"
	fieldContent = "content"
	// headingBoost weighs a match in a point's headings (its title, heading
	// path and file name) over one in its text.
	headingBoost = 2.0
)

// newMapping is the index mapping: two text fields, the analyzer above,
// BM25 scoring.
func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomTokenFilter(bigramName, map[string]any{"type": cjk.BigramName, "output_unigram": true}); err != nil {
		return nil, err
	}
	if err := m.AddCustomAnalyzer(analyzerName, map[string]any{
		"type": custom.Name, "tokenizer": unicode.Name,
		"token_filters": []any{cjk.WidthName, lowercase.Name, en.PossessiveName, en.StopName, en.SnowballStemmerName, bigramName},
	}); err != nil {
		return nil, err
	}
	m.DefaultAnalyzer = analyzerName
	m.ScoringModel = bleveindex.BM25Scoring
	doc := bleve.NewDocumentStaticMapping()
	for _, f := range []string{fieldHeading, fieldContent} {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = analyzerName
		fm.Store = false
		fm.IncludeTermVectors = false
		doc.AddFieldMappingsAt(f, fm)
	}
	m.DefaultMapping = doc
	return m, nil
}

// index is the parsed, searchable form of one base: its points and a
// BM25 index over them (bleve's scorch, in memory only). It is shared by
// the searches of a base and reference-counted: the cache retires it when
// the base's files change, and it is closed when the last search using it
// releases it.
type index struct {
	fp     string
	points []Point
	idx    bleve.Index
	built  time.Time

	refMu   sync.Mutex // guards refs and retired
	refs    int
	retired bool

	vecMu sync.Mutex // guards the fields below: the points' embeddings
	vecs  [][]float32
	// vecModel is the model vecs come from.
	vecModel string
	// vecFailed is when computing vecs last failed; retried after a pause.
	vecFailed time.Time
}

// buildIndex indexes points. The bleve index starts scorch's own
// goroutines; [index.close] stops them.
func buildIndex(fp string, points []Point) (*index, error) {
	m, err := newMapping()
	if err != nil {
		return nil, fmt.Errorf("knowledge: index mapping: %w", err)
	}
	// An empty path keeps scorch in memory: nothing touches the disk.
	bi, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("knowledge: new index: %w", err)
	}
	b := bi.NewBatch()
	for i, p := range points {
		doc := map[string]any{fieldHeading: headingText(p), fieldContent: p.Content}
		if err := b.Index(strconv.Itoa(i), doc); err != nil {
			_ = bi.Close()
			return nil, fmt.Errorf("knowledge: index %s: %w", p.Source, err)
		}
	}
	if err := bi.Batch(b); err != nil {
		_ = bi.Close()
		return nil, fmt.Errorf("knowledge: index: %w", err)
	}
	return &index{fp: fp, points: points, idx: bi, built: time.Now()}, nil
}

// headingText is what the heading field holds: the point's title, its
// heading path and its file's name.
func headingText(p Point) string {
	parts := append([]string{p.Title}, p.HeadingPath...)
	parts = append(parts, strings.NewReplacer("/", " ", "_", " ", "-", " ", ".", " ").Replace(p.Source))
	return strings.Join(parts, " ")
}

// scored is a point's position in [index.points] and its score.
type scored struct {
	doc   int
	score float64
}

// bm25 returns up to n points matching q, best first.
func (ix *index) bm25(q string, n int) ([]scored, error) {
	if len(ix.points) == 0 || strings.TrimSpace(q) == "" {
		return nil, nil
	}
	content := bleve.NewMatchQuery(q)
	content.SetField(fieldContent)
	content.Analyzer = analyzerName
	heading := bleve.NewMatchQuery(q)
	heading.SetField(fieldHeading)
	heading.Analyzer = analyzerName
	heading.SetBoost(headingBoost)
	req := bleve.NewSearchRequestOptions(query.NewDisjunctionQuery([]query.Query{content, heading}), n, 0, false)
	res, err := ix.idx.Search(req)
	if err != nil {
		return nil, fmt.Errorf("knowledge: search: %w", err)
	}
	out := make([]scored, 0, len(res.Hits))
	for _, h := range res.Hits {
		i, err := strconv.Atoi(h.ID)
		if err != nil || i < 0 || i >= len(ix.points) {
			continue
		}
		out = append(out, scored{doc: i, score: h.Score})
	}
	return out, nil
}

// ref takes a reference; false when the index is already retired and
// closed.
func (ix *index) ref() bool {
	ix.refMu.Lock()
	defer ix.refMu.Unlock()
	if ix.retired && ix.refs == 0 {
		return false
	}
	ix.refs++
	return true
}

// unref drops a reference, closing a retired index at the last.
func (ix *index) unref() {
	ix.refMu.Lock()
	ix.refs--
	last := ix.retired && ix.refs == 0
	ix.refMu.Unlock()
	if last {
		_ = ix.idx.Close()
	}
}

// retire marks the index replaced: it closes now if unused, else when the
// last user releases it.
func (ix *index) retire() {
	ix.refMu.Lock()
	if ix.retired {
		ix.refMu.Unlock()
		return
	}
	ix.retired = true
	last := ix.refs == 0
	ix.refMu.Unlock()
	if last {
		_ = ix.idx.Close()
	}
}
