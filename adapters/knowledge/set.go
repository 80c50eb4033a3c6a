package knowledge

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// DirBase is a base of the configuration (knowledge.bases): a directory of
// .md and .txt files, offered to every user as a tool named after it.
type DirBase struct {
	Name        string
	Path        string
	Description string
}

// Options configures a [Set]. nil means the defaults: no bases.
type Options struct {
	// Bases are the directories of the configuration.
	Bases []DirBase
	// Files keeps uploaded bases (an admin's, owner "", and users'); nil
	// means none.
	Files toolconfig.FileStore
	// Configs holds the lists of uploaded bases: users' in their tool
	// configurations ([toolconfig.UserConfig.Knowledge]) and the
	// admin's in the configuration of owner "" (the owner of admin
	// uploads in Files). Nil means no uploaded bases.
	Configs *toolconfig.Configs
	// Rerank has a model order the best lexical (or hybrid) candidates.
	Rerank bool
	// Models resolves the rerank model; required with Rerank.
	Models orchestrator.Models
	// RerankModel names the model that reranks; "" means the run's own.
	RerankModel string
	// RerankTimeout bounds the rerank; past it the lexical order stands.
	// Default 15 s.
	RerankTimeout time.Duration
	// RerankCandidates is how many candidates the model orders. Default 20.
	RerankCandidates int
	// Embeddings, when set, adds dense retrieval fused with BM25.
	Embeddings *Embeddings
	// Vectors keeps the embeddings; nil keeps them in memory only.
	Vectors VectorStore
	// MaxFileBytes caps one file. Default 512 KiB.
	MaxFileBytes int64
	// MaxBaseBytes caps the files of one uploaded base. Default 16 MiB.
	MaxBaseBytes int64
	// MaxBases caps the uploaded bases of one owner (a user, or the
	// admin). Default 32.
	MaxBases int
	// MaxPointChars is the length past which a knowledge point is split.
	// Default 1200 characters.
	MaxPointChars int
	// MaxCachedIndexes bounds the parsed indexes kept. Default 64.
	MaxCachedIndexes int
	// Logger receives skipped files and failed reranks and embeddings.
	// Default: discard.
	Logger *slog.Logger
}

// Defaults of [Options].
const (
	DefaultMaxFileBytes = 512 << 10
	DefaultMaxBaseBytes = 16 << 20
	DefaultMaxBases     = 32
)

// Set is the knowledge [orchestrator.Toolset]: one tool per base a user
// may search. It is safe for concurrent use; [Set.Close] releases the
// indexes.
type Set struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	opts  Options
	dirs  []DirBase
	cache *cache
	rr    *reranker // nil: no rerank
	emb   *embedder // nil: BM25 alone
}

var _ orchestrator.Toolset = (*Set)(nil)

// New returns the toolset. Config bases are checked when searched, not
// here: a missing directory makes its tool answer with an error.
func New(opts *Options) *Set {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxBaseBytes <= 0 {
		o.MaxBaseBytes = DefaultMaxBaseBytes
	}
	if o.MaxBases <= 0 {
		o.MaxBases = DefaultMaxBases
	}
	if o.MaxPointChars <= 0 {
		o.MaxPointChars = DefaultMaxPointChars
	}
	if o.RerankTimeout <= 0 {
		o.RerankTimeout = DefaultRerankTimeout
	}
	if o.RerankCandidates <= 0 {
		o.RerankCandidates = DefaultRerankCandidates
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{opts: o, cache: newCache(o.MaxCachedIndexes, o.MaxPointChars), emb: newEmbedder(o.Embeddings, o.Vectors)}
	for _, b := range o.Bases {
		if abs, err := filepath.Abs(b.Path); err == nil {
			b.Path = abs
		}
		s.dirs = append(s.dirs, b)
	}
	if o.Rerank && o.Models != nil {
		s.rr = &reranker{models: o.Models, model: o.RerankModel, timeout: o.RerankTimeout}
	}
	return s
}

// Name implements [orchestrator.Toolset].
func (s *Set) Name() string { return "knowledge" }

// Close drops every index. Searches under way finish first on theirs.
func (s *Set) Close() error {
	s.cache.close()
	return nil
}

// base is one base as a tool sees it.
type base struct {
	// tool is the tool's canonical name: the base's name, or owner@name.
	tool, name, description string
	owner                   string // "" for global bases
	shared                  bool
	src                     source
}

// Tools implements [orchestrator.Toolset]: the bases of the configuration
// and the admin's uploads for everyone; with a user, the user's own bases
// (user@base) and the bases other users share (owner@base). A store that
// fails leaves the configured bases (and logs why).
func (s *Set) Tools(ctx context.Context, userID string) ([]orchestrator.Tool, error) {
	bases := s.globalBases(ctx)
	if userID != "" {
		bases = append(bases, s.userBases(ctx, userID)...)
	}
	out := make([]orchestrator.Tool, len(bases))
	for i, b := range bases {
		out[i] = &tool{set: s, b: b}
	}
	return out, nil
}

// globalBases are the configured bases and the admin's uploads (those
// whose names a configured base does not take).
func (s *Set) globalBases(ctx context.Context) []base {
	out := make([]base, 0, len(s.dirs))
	taken := map[string]bool{}
	for _, d := range s.dirs {
		taken[d.Name] = true
		out = append(out, base{tool: d.Name, name: d.Name, description: d.Description,
			src: dirSource{root: d.Path, maxFile: s.opts.MaxFileBytes, log: s.opts.Logger}})
	}
	if s.opts.Configs == nil || s.opts.Files == nil {
		return out
	}
	c, err := s.opts.Configs.Get(ctx, adminOwner)
	if err != nil {
		s.opts.Logger.WarnContext(ctx, "uploaded knowledge bases unavailable", "err", err)
		return out
	}
	for _, k := range c.Knowledge {
		if !taken[k.Name] {
			out = append(out, s.storedBase(adminOwner, k))
		}
	}
	return out
}

// userBases are userID's own bases and those others share.
func (s *Set) userBases(ctx context.Context, userID string) []base {
	if s.opts.Configs == nil || s.opts.Files == nil {
		return nil
	}
	var out []base
	own, err := s.opts.Configs.Get(ctx, userID)
	if err != nil {
		s.opts.Logger.WarnContext(ctx, "user's knowledge bases unavailable", "user_id", userID, "err", err)
	} else {
		for _, k := range own.Knowledge {
			out = append(out, s.storedBase(userID, k))
		}
	}
	shared, err := s.opts.Configs.Shared(ctx)
	if err != nil {
		s.opts.Logger.WarnContext(ctx, "shared knowledge bases unavailable", "err", err)
		return out
	}
	for _, c := range shared {
		if c.UserID == userID || c.UserID == adminOwner {
			continue
		}
		for _, k := range c.Knowledge {
			if k.Shared {
				out = append(out, s.storedBase(c.UserID, k))
			}
		}
	}
	return out
}

// adminOwner owns the admin's uploads.
const adminOwner = ""

func (s *Set) storedBase(owner string, k toolconfig.Knowledge) base {
	name := k.Name
	if owner != adminOwner {
		name = owner + "@" + k.Name
	}
	return base{tool: name, name: k.Name, description: k.Description, owner: owner, shared: k.Shared,
		src: storeSource{files: s.opts.Files, owner: owner, name: k.Name}}
}

func (b base) String() string {
	if b.owner == "" {
		return fmt.Sprintf("knowledge base %q", b.name)
	}
	return fmt.Sprintf("knowledge base %q of %q", b.name, b.owner)
}
