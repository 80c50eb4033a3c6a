package config_test

import (
	"strings"
	"testing"
	"time"
)

func TestKnowledgeSection(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
knowledge:
  bases:
    - {name: handbook, path: ./kb/handbook, description: the staff handbook}
    - {name: 制度, path: ./kb/rules}
  rerank: true
  rerank_timeout_s: 5
  embeddings: {base_url: "http://127.0.0.1:9/v1", api_key: sk, model: bge-m3}
`}, nil)
	k := c.Knowledge
	if len(k.Bases) != 2 || k.Bases[1].Name != "制度" || !k.Rerank || k.RerankTimeout() != 5*time.Second ||
		!k.Embeddings.Enabled() || k.Embeddings.Timeout() != 30*time.Second || k.Embeddings.BatchSize != 32 ||
		k.MaxFileBytes != 512<<10 || k.MaxBaseBytes != 16<<20 || k.MaxBases != 32 || k.RerankCandidates != 20 {
		t.Errorf("knowledge = %+v", k)
	}
}

func TestKnowledgeBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"name", "knowledge:\n  bases:\n    - {name: 'a b', path: x}\n", "knowledge.bases[0].name: must be 1-64"},
		{"name with @", "knowledge:\n  bases:\n    - {name: 'a@b', path: x}\n", "knowledge.bases[0].name: must be 1-64"},
		{"duplicate name", "knowledge:\n  bases:\n    - {name: a, path: x}\n    - {name: a, path: y}\n", `knowledge.bases[1].name: "a" is used by another base`},
		{"no path", "knowledge:\n  bases:\n    - {name: a}\n", "knowledge.bases[0].path: is required"},
		{"unknown field", "knowledge:\n  bases:\n    - {name: a, path: x, root: y}\n", "knowledge.bases[0].root"},
		{"rerank model", "knowledge:\n  rerank_model: nope\n", "knowledge.rerank_model: must name an entry of llm.models"},
		{"rerank timeout", "knowledge:\n  rerank_timeout_s: 0\n", "knowledge.rerank_timeout_s: must be at least 1"},
		{"candidates", "knowledge:\n  rerank_candidates: 1\n", "knowledge.rerank_candidates: must be between 2 and 100"},
		{"embeddings url", "knowledge:\n  embeddings: {base_url: 'ftp://x', model: m}\n", "knowledge.embeddings.base_url: must be an absolute http"},
		{"embeddings model", "knowledge:\n  embeddings: {base_url: 'http://x/v1'}\n", "knowledge.embeddings.model: is required"},
		{"embeddings url missing", "knowledge:\n  embeddings: {model: m}\n", "knowledge.embeddings.base_url: is required"},
		{"batch", "knowledge:\n  embeddings: {batch_size: 0}\n", "knowledge.embeddings.batch_size: must be between 1 and 2048"},
		{"file bytes", "knowledge:\n  max_file_bytes: 0\n", "knowledge.max_file_bytes: must be at least 1"},
		{"base bytes", "knowledge:\n  max_file_bytes: 100\n  max_base_bytes: 99\n", "knowledge.max_base_bytes: must be at least max_file_bytes (100)"},
		{"bases", "knowledge:\n  max_bases: 0\n", "knowledge.max_bases: must be at least 1"},
		{"point chars", "knowledge:\n  max_point_chars: 10\n", "knowledge.max_point_chars: must be between 200 and 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.yaml); !strings.Contains(got, tt.want) {
				t.Errorf("error =\n%s\nwant it to contain %q", got, tt.want)
			}
		})
	}
}

// The embeddings key is a secret: masked when the configuration is shown.
func TestKnowledgeKeyRedacted(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: "knowledge:\n  embeddings: {base_url: 'http://x/v1', model: m, api_key: sk-secret}\n"}, nil)
	if got := c.Redacted().Knowledge.Embeddings.APIKey; got == "sk-secret" || got == "" {
		t.Errorf("redacted api_key = %q", got)
	}
}
