package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// Managing bases: what the admin routes (/wunder/admin/knowledge, owner
// "") and the user routes (/wunder/user_tools/knowledge, owner = the
// user) do. Every method takes the owner the request acts for and looks
// bases up under that owner only: another user's base is "not found",
// exactly like one that does not exist. Bad input is an error wrapping
// orchestrator.ErrInvalidArgument.

// Sources of a [BaseInfo].
const (
	SourceConfig = "config"
	SourceUpload = "upload"
)

// maxDescriptionChars bounds a base's description.
const maxDescriptionChars = 1000

// BaseInfo describes a base.
type BaseInfo struct {
	Name        string
	Description string
	// Shared: a user's base that every other user may search.
	Shared bool
	// Source is SourceConfig (a directory of knowledge.bases, read-only
	// here) or SourceUpload (files in the store).
	Source string
	// Root is a config base's directory.
	Root  string
	Files int
	Bytes int64
}

// BaseSpec is a base as a list of bases sets it.
type BaseSpec struct {
	Name        string
	Description string
	Shared      bool
}

// FileInfo describes a file of a base.
type FileInfo struct {
	Path      string
	Size      int64
	SHA256    string
	UpdatedAt time.Time
}

// RefreshInfo is what a refresh built.
type RefreshInfo struct {
	Name   string
	Points int
}

func (s *Set) managed() error {
	if s.opts.Files == nil || s.opts.Configs == nil {
		return fmt.Errorf("%w: knowledge bases cannot be uploaded here (no store)", orchestrator.ErrUnavailable)
	}
	return nil
}

// list returns owner's list of uploaded bases.
func (s *Set) list(ctx context.Context, owner string) ([]toolconfig.Knowledge, error) {
	if s.opts.Configs == nil {
		return nil, nil
	}
	c, err := s.opts.Configs.Get(ctx, owner)
	if err != nil {
		return nil, err
	}
	return c.Knowledge, nil
}

// Bases lists owner's bases: for the admin (owner "") the configured
// directories and the uploaded bases, for a user their own.
func (s *Set) Bases(ctx context.Context, owner string) ([]BaseInfo, error) {
	var out []BaseInfo
	if owner == adminOwner {
		for _, d := range s.dirs {
			bi := BaseInfo{Name: d.Name, Description: d.Description, Source: SourceConfig, Root: d.Path}
			if es, err := (dirSource{root: d.Path, maxFile: s.opts.MaxFileBytes, log: s.opts.Logger}).walk(ctx); err == nil {
				for _, e := range es {
					bi.Files++
					bi.Bytes += e.size
				}
			}
			out = append(out, bi)
		}
	}
	list, err := s.list(ctx, owner)
	if err != nil || len(list) == 0 {
		return out, err
	}
	files, err := s.opts.Files.ListToolFiles(ctx, owner, toolconfig.KindKnowledge, "", false)
	if err != nil {
		return nil, err
	}
	for _, k := range list {
		bi := BaseInfo{Name: k.Name, Description: k.Description, Shared: k.Shared, Source: SourceUpload}
		for _, f := range files {
			if f.Name == k.Name {
				bi.Files++
				bi.Bytes += f.Size
			}
		}
		out = append(out, bi)
	}
	return out, nil
}

// SetBases replaces owner's list of uploaded bases. The files of a base
// that leaves the list are deleted. The admin's bases are for everyone
// (Shared does not apply) and may not take a configured base's name.
func (s *Set) SetBases(ctx context.Context, owner string, specs []BaseSpec) ([]BaseInfo, error) {
	if err := s.managed(); err != nil {
		return nil, err
	}
	if len(specs) > s.opts.MaxBases {
		return nil, fmt.Errorf("%w: %d knowledge bases, over the limit of %d (knowledge.max_bases)", orchestrator.ErrInvalidArgument, len(specs), s.opts.MaxBases)
	}
	next := make([]toolconfig.Knowledge, 0, len(specs))
	seen := map[string]bool{}
	for _, b := range specs {
		if err := toolconfig.CheckName("knowledge base", b.Name); err != nil {
			return nil, err
		}
		if seen[b.Name] {
			return nil, fmt.Errorf("%w: knowledge base %q is listed twice", orchestrator.ErrInvalidArgument, b.Name)
		}
		seen[b.Name] = true
		if !utf8.ValidString(b.Description) || utf8.RuneCountInString(b.Description) > maxDescriptionChars {
			return nil, fmt.Errorf("%w: the description of knowledge base %q must be UTF-8 text of at most %d characters", orchestrator.ErrInvalidArgument, b.Name, maxDescriptionChars)
		}
		if owner == adminOwner {
			if s.dir(b.Name) != nil {
				return nil, fmt.Errorf("%w: knowledge base %q comes from the configuration (knowledge.bases); choose another name", orchestrator.ErrConflict, b.Name)
			}
			b.Shared = false
		}
		next = append(next, toolconfig.Knowledge{Name: b.Name, Description: b.Description, Shared: b.Shared})
	}
	_, err := s.opts.Configs.Update(ctx, owner, func(c *toolconfig.UserConfig) error {
		c.Knowledge = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.dropOrphans(ctx, owner, seen); err != nil {
		return nil, err
	}
	return s.Bases(ctx, owner)
}

// dropOrphans deletes owner's stored files of bases not in keep: those of
// bases just taken off the list, and any an earlier attempt failed to
// delete (so posting the list again finishes the job). A failure is the
// caller's error, not a log line: the client is told its files remain.
func (s *Set) dropOrphans(ctx context.Context, owner string, keep map[string]bool) error {
	files, err := s.opts.Files.ListToolFiles(ctx, owner, toolconfig.KindKnowledge, "", false)
	if err != nil {
		return fmt.Errorf("%w: the list of knowledge bases is saved, but the files of removed bases were not checked (%v); post the list again", orchestrator.ErrUnavailable, err)
	}
	var done []string
	for _, f := range files {
		if keep[f.Name] || slices.Contains(done, f.Name) {
			continue
		}
		err := s.opts.Files.DeleteToolFiles(ctx, owner, toolconfig.KindKnowledge, f.Name)
		s.cache.forget(storeSource{owner: owner, name: f.Name}.key())
		if err != nil && !errors.Is(err, orchestrator.ErrNotFound) {
			return fmt.Errorf("%w: the list of knowledge bases is saved, but the files of %q were not deleted (%v); post the list again", orchestrator.ErrUnavailable, f.Name, err)
		}
		done = append(done, f.Name)
	}
	return nil
}

func (s *Set) dir(name string) *DirBase {
	for i := range s.dirs {
		if s.dirs[i].Name == name {
			return &s.dirs[i]
		}
	}
	return nil
}

// resolve finds owner's base: a configured directory (admin only) or an
// uploaded base of owner's list.
func (s *Set) resolve(ctx context.Context, owner, name string) (*DirBase, error) {
	if err := toolconfig.CheckName("knowledge base", name); err != nil {
		return nil, err
	}
	if owner == adminOwner {
		if d := s.dir(name); d != nil {
			return d, nil
		}
	}
	list, err := s.list(ctx, owner)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(list, func(k toolconfig.Knowledge) bool { return k.Name == name }) || s.managed() != nil {
		return nil, fmt.Errorf("%w: knowledge base %q", orchestrator.ErrNotFound, name)
	}
	return nil, nil
}

// Refresh parses and indexes the global bases again (the one named, or
// all when name is ""), whether or not their files changed.
func (s *Set) Refresh(ctx context.Context, name string) ([]RefreshInfo, error) {
	var bases []base
	for _, b := range s.globalBases(ctx) {
		if name == "" || b.name == name {
			bases = append(bases, b)
		}
	}
	if name != "" && len(bases) == 0 {
		if err := toolconfig.CheckName("knowledge base", name); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: knowledge base %q", orchestrator.ErrNotFound, name)
	}
	out := make([]RefreshInfo, 0, len(bases))
	for _, b := range bases {
		ix, release, err := s.cache.rebuild(ctx, b.src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b, err)
		}
		out = append(out, RefreshInfo{Name: b.name, Points: len(ix.points)})
		release()
	}
	return out, nil
}

// Search ranks the passages of owner's base name for query, as the base's
// tool does in a run (the same ranking: BM25, fused with embeddings when
// configured, reranked when configured), so that a person can test what
// a model would retrieve. owner "" is the admin: the configured and
// uploaded global bases. limit is clamped to 1..MaxLimit (0 = DefaultLimit).
// Errors: ErrInvalidArgument (no query, a bad name), ErrNotFound (no such
// base of owner's).
func (s *Set) Search(ctx context.Context, owner, name, query string, limit int) ([]Hit, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, fmt.Errorf("%w: query is required: a question or keywords to look for", orchestrator.ErrInvalidArgument)
	}
	if utf8.RuneCountInString(q) > maxQueryChars {
		return nil, fmt.Errorf("%w: query is longer than %d characters", orchestrator.ErrInvalidArgument, maxQueryChars)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	limit = min(max(limit, 1), MaxLimit)
	if _, err := s.resolve(ctx, owner, name); err != nil {
		return nil, err
	}
	var found *base
	if owner == adminOwner {
		for _, b := range s.globalBases(ctx) {
			if b.name == name {
				found = &b
				break
			}
		}
	} else if list, err := s.list(ctx, owner); err == nil {
		for _, k := range list {
			if k.Name == name {
				b := s.storedBase(owner, k)
				found = &b
				break
			}
		}
	} else {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: knowledge base %q", orchestrator.ErrNotFound, name)
	}
	return s.search(ctx, *found, q, limit, "")
}
