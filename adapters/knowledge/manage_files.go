package knowledge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// The files of a base, for the management routes (see manage.go): listed
// and read in any base the owner has, written and deleted in uploaded
// ones only.

// Files lists the files of owner's base.
func (s *Set) Files(ctx context.Context, owner, name string) ([]FileInfo, error) {
	d, err := s.resolve(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	if d != nil {
		es, err := (dirSource{root: d.Path, maxFile: s.opts.MaxFileBytes, log: s.opts.Logger}).walk(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			out = append(out, FileInfo{Path: e.path, Size: e.size, UpdatedAt: time.Unix(0, e.mtime).UTC()})
		}
		return out, nil
	}
	files, err := s.opts.Files.ListToolFiles(ctx, owner, toolconfig.KindKnowledge, name, false)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		out = append(out, FileInfo{Path: f.Path, Size: f.Size, SHA256: f.SHA256, UpdatedAt: f.UpdatedAt})
	}
	return out, nil
}

// ReadFile returns the content of a file of owner's base.
func (s *Set) ReadFile(ctx context.Context, owner, name, path string) ([]byte, error) {
	if err := toolconfig.CheckFilePath(path); err != nil {
		return nil, err
	}
	d, err := s.resolve(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	if d != nil {
		root, err := os.OpenRoot(d.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: knowledge base directory %s: %v", orchestrator.ErrUnavailable, d.Path, err)
		}
		defer root.Close()
		info, err := root.Stat(filepath.FromSlash(path))
		if err != nil || !info.Mode().IsRegular() || !docExt(path) {
			return nil, fmt.Errorf("%w: file %q of knowledge base %q", orchestrator.ErrNotFound, path, name)
		}
		return root.ReadFile(filepath.FromSlash(path))
	}
	files, err := s.opts.Files.ListToolFiles(ctx, owner, toolconfig.KindKnowledge, name, true)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.Path == path {
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("%w: file %q of knowledge base %q", orchestrator.ErrNotFound, path, name)
}

// CheckFile reports whether data may be stored at path in a base: a clean
// relative path ending in .md or .txt, UTF-8 text without NUL bytes, at
// most MaxFileBytes.
func (s *Set) CheckFile(path string, data []byte) error {
	if err := toolconfig.CheckFilePath(path); err != nil {
		return err
	}
	if !docExt(path) {
		return fmt.Errorf("%w: file %q: only Markdown (.md) and plain-text (.txt) files go into a knowledge base", orchestrator.ErrInvalidArgument, path)
	}
	if int64(len(data)) > s.opts.MaxFileBytes {
		return fmt.Errorf("%w: file %q is %d bytes, over the limit of %d (knowledge.max_file_bytes)", orchestrator.ErrInvalidArgument, path, len(data), s.opts.MaxFileBytes)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return fmt.Errorf("%w: file %q is not UTF-8 text", orchestrator.ErrInvalidArgument, path)
	}
	return nil
}

// WriteFile creates or replaces a file of owner's uploaded base.
func (s *Set) WriteFile(ctx context.Context, owner, name, path string, data []byte) error {
	if err := s.CheckFile(path, data); err != nil {
		return err
	}
	d, err := s.resolve(ctx, owner, name)
	if err != nil {
		return err
	}
	if d != nil {
		return fmt.Errorf("%w: knowledge base %q is a directory of the configuration; change its files there", orchestrator.ErrConflict, name)
	}
	files, err := s.opts.Files.ListToolFiles(ctx, owner, toolconfig.KindKnowledge, name, false)
	if err != nil {
		return err
	}
	total := int64(len(data))
	for _, f := range files {
		if f.Path != path {
			total += f.Size
		}
	}
	if total > s.opts.MaxBaseBytes {
		return fmt.Errorf("%w: knowledge base %q would hold %d bytes, over the limit of %d (knowledge.max_base_bytes)", orchestrator.ErrInvalidArgument, name, total, s.opts.MaxBaseBytes)
	}
	return s.opts.Files.PutToolFiles(ctx, owner, toolconfig.KindKnowledge, name, []toolconfig.File{{Path: path, Data: data}}, false)
}

// DeleteFile removes a file of owner's uploaded base.
func (s *Set) DeleteFile(ctx context.Context, owner, name, path string) error {
	if err := toolconfig.CheckFilePath(path); err != nil {
		return err
	}
	d, err := s.resolve(ctx, owner, name)
	if err != nil {
		return err
	}
	if d != nil {
		return fmt.Errorf("%w: knowledge base %q is a directory of the configuration; change its files there", orchestrator.ErrConflict, name)
	}
	if err := s.opts.Files.DeleteToolFiles(ctx, owner, toolconfig.KindKnowledge, name, path); err != nil {
		if errors.Is(err, orchestrator.ErrNotFound) {
			return fmt.Errorf("%w: file %q of knowledge base %q", orchestrator.ErrNotFound, path, name)
		}
		return err
	}
	return nil
}
