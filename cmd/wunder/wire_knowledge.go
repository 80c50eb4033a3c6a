package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/wunder/wunder/adapters/knowledge"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
	"github.com/wunder/wunder/toolconfig"
)

// The store keeps the knowledge points' embedding vectors.
var _ knowledge.VectorStore = (*storage.Store)(nil)

// knowledgeParts is the knowledge-base toolset (config knowledge) and the
// routes that manage its bases.
type knowledgeParts struct {
	set *knowledge.Set
}

// newKnowledge builds the toolset: the directories of knowledge.bases
// (each must exist), uploads in the store, the rerank through the models
// registry, embeddings kept in the store.
func newKnowledge(cfg *config.Config, log *slog.Logger, store *storage.Store, models orchestrator.Models, configs *toolconfig.Configs) (*knowledgeParts, error) {
	k := cfg.Knowledge
	var dirs []knowledge.DirBase
	for i, b := range k.Bases {
		if fi, err := os.Stat(b.Path); err != nil || !fi.IsDir() {
			return nil, withCode(exitConfig, fmt.Errorf("knowledge.bases[%d].path: %q is not a directory", i, b.Path))
		}
		dirs = append(dirs, knowledge.DirBase{Name: b.Name, Path: b.Path, Description: b.Description})
	}
	var emb *knowledge.Embeddings
	if e := k.Embeddings; e.Enabled() {
		emb = &knowledge.Embeddings{BaseURL: e.BaseURL, APIKey: e.APIKey, Model: e.Model, Timeout: e.Timeout(), BatchSize: e.BatchSize}
	}
	log = log.With("component", "knowledge")
	set := knowledge.New(&knowledge.Options{
		Bases: dirs, Files: store, Configs: configs,
		Rerank: k.Rerank, Models: models, RerankModel: k.RerankModel, RerankTimeout: k.RerankTimeout(), RerankCandidates: k.RerankCandidates,
		Embeddings: emb, Vectors: store,
		MaxFileBytes: k.MaxFileBytes, MaxBaseBytes: k.MaxBaseBytes, MaxBases: k.MaxBases,
		MaxPointChars: k.MaxPointChars, MaxCachedIndexes: k.MaxCachedIndexes,
		Logger: log,
	})
	log.Info("knowledge bases", "configured", len(dirs), "rerank", k.Rerank, "embeddings", emb != nil)
	return &knowledgeParts{set: set}, nil
}

func (p *knowledgeParts) toolsets() []orchestrator.Toolset { return []orchestrator.Toolset{p.set} }

func (p *knowledgeParts) close() {
	if p != nil {
		_ = p.set.Close()
	}
}

// api adapts the toolset to the gateway's knowledge routes.
func (p *knowledgeParts) api() gateway.Knowledge { return knowledgeAPI{p.set} }

type knowledgeAPI struct{ set *knowledge.Set }

func toGatewayBases(in []knowledge.BaseInfo) []gateway.KnowledgeBase {
	out := make([]gateway.KnowledgeBase, len(in))
	for i, b := range in {
		out[i] = gateway.KnowledgeBase{Name: b.Name, Description: b.Description, Shared: b.Shared, Source: b.Source,
			Root: b.Root, FileCount: b.Files, Bytes: b.Bytes}
	}
	return out
}

func (a knowledgeAPI) KnowledgeBases(ctx context.Context, owner string) ([]gateway.KnowledgeBase, error) {
	bases, err := a.set.Bases(ctx, owner)
	return toGatewayBases(bases), err
}

func (a knowledgeAPI) SetKnowledgeBases(ctx context.Context, owner string, bases []gateway.KnowledgeBase) ([]gateway.KnowledgeBase, error) {
	specs := make([]knowledge.BaseSpec, len(bases))
	for i, b := range bases {
		specs[i] = knowledge.BaseSpec{Name: b.Name, Description: b.Description, Shared: b.Shared}
	}
	got, err := a.set.SetBases(ctx, owner, specs)
	return toGatewayBases(got), err
}

func (a knowledgeAPI) KnowledgeFiles(ctx context.Context, owner, base string) ([]gateway.KnowledgeFile, error) {
	files, err := a.set.Files(ctx, owner, base)
	out := make([]gateway.KnowledgeFile, len(files))
	for i, f := range files {
		out[i] = gateway.KnowledgeFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256, UpdatedAt: f.UpdatedAt}
	}
	return out, err
}

func (a knowledgeAPI) ReadKnowledgeFile(ctx context.Context, owner, base, path string) ([]byte, error) {
	return a.set.ReadFile(ctx, owner, base, path)
}

func (a knowledgeAPI) WriteKnowledgeFile(ctx context.Context, owner, base, path string, data []byte) error {
	return a.set.WriteFile(ctx, owner, base, path, data)
}

func (a knowledgeAPI) DeleteKnowledgeFile(ctx context.Context, owner, base, path string) error {
	return a.set.DeleteFile(ctx, owner, base, path)
}

func (a knowledgeAPI) RefreshKnowledge(ctx context.Context, base string) (any, error) {
	info, err := a.set.Refresh(ctx, base)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(info))
	for i, r := range info {
		out[i] = map[string]any{"name": r.Name, "points": r.Points}
	}
	return out, nil
}

func (a knowledgeAPI) SearchKnowledge(ctx context.Context, owner, base, query string, limit int) (any, error) {
	hits, err := a.set.Search(ctx, owner, base, query, limit)
	if hits == nil {
		hits = []knowledge.Hit{}
	}
	return hits, err
}
