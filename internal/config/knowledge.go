package config

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Knowledge configures the knowledge-base tool source (adapters/knowledge,
// see docs/tools.md#knowledge-bases): the bases on disk, the limits of
// uploaded ones, and the optional rerank and dense retrieval.
type Knowledge struct {
	// Bases are directories of Markdown and text files, each offered to
	// every user as a tool named after it. Default [].
	Bases []KnowledgeBase `yaml:"bases"`
	// Rerank has a model order the best candidates of each search; when it
	// fails or times out the lexical order stands. Default false.
	Rerank bool `yaml:"rerank"`
	// RerankModel is the llm.models entry that reranks; "" = the run's
	// own model. Default "".
	RerankModel string `yaml:"rerank_model"`
	// RerankTimeoutSeconds (rerank_timeout_s) bounds one rerank. Default 15.
	RerankTimeoutSeconds int `yaml:"rerank_timeout_s"`
	// RerankCandidates is how many candidates the model orders. Default 20.
	RerankCandidates int `yaml:"rerank_candidates"`
	// Embeddings, when base_url and model are set, adds dense retrieval
	// fused with BM25.
	Embeddings KnowledgeEmbeddings `yaml:"embeddings"`
	// MaxFileBytes caps one file of a base (uploads, and files read from
	// bases' directories). Default 524288 (512 KiB).
	MaxFileBytes int64 `yaml:"max_file_bytes"`
	// MaxBaseBytes caps the files of one uploaded base. Default 16777216
	// (16 MiB).
	MaxBaseBytes int64 `yaml:"max_base_bytes"`
	// MaxBases caps the uploaded bases of one user, and the admin's.
	// Default 32.
	MaxBases int `yaml:"max_bases"`
	// MaxPointChars is the length (characters) past which a knowledge point
	// is split further. Default 1200.
	MaxPointChars int `yaml:"max_point_chars"`
	// MaxCachedIndexes bounds the bases whose parsed index stays in memory.
	// Default 64.
	MaxCachedIndexes int `yaml:"max_cached_indexes"`
}

// KnowledgeBase is one entry of knowledge.bases.
type KnowledgeBase struct {
	// Name is the tool's name: letters (any script), digits, _ - and .,
	// not leading with . or -, at most 64 characters, unique. Required.
	Name string `yaml:"name"`
	// Path is the directory (relative to the working directory); its .md
	// and .txt files, subdirectories included, are the base. Required.
	Path string `yaml:"path"`
	// Description tells the model what the base holds.
	Description string `yaml:"description"`
}

// KnowledgeEmbeddings is an OpenAI-compatible embeddings endpoint.
type KnowledgeEmbeddings struct {
	// BaseURL is the API base, e.g. https://api.openai.com/v1; requests go
	// to BaseURL/embeddings. "" = no dense retrieval.
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key" secret:"true"`
	// Model is the embedding model; required with base_url.
	Model string `yaml:"model"`
	// TimeoutSeconds (timeout_s) bounds one request. Default 30.
	TimeoutSeconds int `yaml:"timeout_s"`
	// BatchSize is how many texts one request embeds. Default 32.
	BatchSize int `yaml:"batch_size"`
}

func knowledgeDefaults() Knowledge {
	return Knowledge{
		Bases:                []KnowledgeBase{},
		RerankTimeoutSeconds: 15,
		RerankCandidates:     20,
		Embeddings:           KnowledgeEmbeddings{TimeoutSeconds: 30, BatchSize: 32},
		MaxFileBytes:         512 << 10,
		MaxBaseBytes:         16 << 20,
		MaxBases:             32,
		MaxPointChars:        1200,
		MaxCachedIndexes:     64,
	}
}

// RerankTimeout is rerank_timeout_s as a duration.
func (k Knowledge) RerankTimeout() time.Duration { return seconds(k.RerankTimeoutSeconds) }

// Timeout is timeout_s as a duration.
func (e KnowledgeEmbeddings) Timeout() time.Duration { return seconds(e.TimeoutSeconds) }

// Enabled reports whether dense retrieval is configured.
func (e KnowledgeEmbeddings) Enabled() bool { return e.BaseURL != "" }

func (c *Config) validateKnowledge(v checker) {
	k := c.Knowledge
	seen := map[string]bool{}
	for i, b := range k.Bases {
		p := indexPath("knowledge.bases", i)
		switch msg := knowledgeNameProblem(b.Name); {
		case msg != "":
			v.fail(joinPath(p, "name"), "%s, got %s", msg, quoteShort(b.Name))
		case seen[b.Name]:
			v.fail(joinPath(p, "name"), "%q is used by another base", b.Name)
		}
		seen[b.Name] = true
		if strings.TrimSpace(b.Path) == "" {
			v.fail(joinPath(p, "path"), "is required: the directory of the base's .md and .txt files")
		}
		if utf8.RuneCountInString(b.Description) > 1000 {
			v.fail(joinPath(p, "description"), "must be at most 1000 characters")
		}
	}
	if m := k.RerankModel; m != "" {
		if _, ok := c.LLM.Models[m]; !ok {
			v.fail("knowledge.rerank_model", "must name an entry of llm.models, got %s", quoteShort(m))
		}
	}
	atLeast(v, "knowledge.rerank_timeout_s", k.RerankTimeoutSeconds, 1)
	v.between("knowledge.rerank_candidates", k.RerankCandidates, 2, 100)
	e := k.Embeddings
	v.httpURL("knowledge.embeddings.base_url", e.BaseURL, false)
	switch {
	case e.BaseURL != "" && e.Model == "":
		v.fail("knowledge.embeddings.model", "is required when knowledge.embeddings.base_url is set")
	case e.BaseURL == "" && e.Model != "":
		v.fail("knowledge.embeddings.base_url", "is required when knowledge.embeddings.model is set")
	}
	atLeast(v, "knowledge.embeddings.timeout_s", e.TimeoutSeconds, 1)
	v.between("knowledge.embeddings.batch_size", e.BatchSize, 1, 2048)
	atLeast(v, "knowledge.max_file_bytes", k.MaxFileBytes, 1)
	if k.MaxBaseBytes < k.MaxFileBytes {
		v.fail("knowledge.max_base_bytes", "must be at least max_file_bytes (%d), got %d", k.MaxFileBytes, k.MaxBaseBytes)
	}
	atLeast(v, "knowledge.max_bases", k.MaxBases, 1)
	v.between("knowledge.max_point_chars", k.MaxPointChars, 200, 100000)
	atLeast(v, "knowledge.max_cached_indexes", k.MaxCachedIndexes, 1)
}

// knowledgeNameProblem mirrors toolconfig.CheckName (config may not
// import the core); "" = valid.
func knowledgeNameProblem(name string) string {
	const rule = "must be 1-64 letters, digits, _, - or . (not leading with . or -)"
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > 64 ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-") {
		return rule
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' ||
			r > 0x7f && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return rule
		}
	}
	return ""
}
