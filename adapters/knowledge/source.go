package knowledge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// Where a base's files come from: a directory of the configuration
// (knowledge.bases) or a package in the store (admin and user uploads).
type source interface {
	// key names the base in the index cache.
	key() string
	// fingerprint is cheap (no file contents) and changes whenever the
	// files do.
	fingerprint(ctx context.Context) (string, error)
	// load reads every file and returns the fingerprint of what it read.
	load(ctx context.Context) ([]file, string, error)
}

// file is one document of a base.
type file struct {
	path string
	data []byte
}

// docExt reports whether a file name is a document of a base: .md or .txt.
func docExt(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".txt":
		return true
	}
	return false
}

// dirSource is a directory of the configuration. Files are read through
// an os.Root, so a symbolic link cannot lead out of it; hidden files and
// directories, other extensions and files over maxFile bytes are skipped.
type dirSource struct {
	root    string
	maxFile int64
	log     *slog.Logger
}

func (d dirSource) key() string { return "dir\x00" + d.root }

type dirEntry struct {
	path  string
	size  int64
	mtime int64
}

func (d dirSource) walk(ctx context.Context) ([]dirEntry, error) {
	var out []dirEntry
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != d.root && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || !docExt(e.Name()) {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		if info.Size() > d.maxFile {
			d.log.Warn("knowledge file skipped: too large", "file", p, "size", info.Size(), "max_file_bytes", d.maxFile)
			return nil
		}
		out = append(out, dirEntry{path: filepath.ToSlash(rel), size: info.Size(), mtime: info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: knowledge base directory %s: %v", orchestrator.ErrUnavailable, d.root, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

func (d dirSource) fingerprint(ctx context.Context) (string, error) {
	es, err := d.walk(ctx)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range es {
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", e.path, e.size, e.mtime)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (d dirSource) load(ctx context.Context) ([]file, string, error) {
	es, err := d.walk(ctx)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, "", fmt.Errorf("%w: knowledge base directory %s: %v", orchestrator.ErrUnavailable, d.root, err)
	}
	defer root.Close()
	h := sha256.New()
	out := make([]file, 0, len(es))
	for _, e := range es {
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", e.path, e.size, e.mtime)
		data, err := root.ReadFile(filepath.FromSlash(e.path))
		if err != nil {
			d.log.Warn("knowledge file skipped", "file", e.path, "base_dir", d.root, "err", err)
			continue
		}
		if !utf8.Valid(data) {
			d.log.Warn("knowledge file skipped: not UTF-8 text", "file", e.path, "base_dir", d.root)
			continue
		}
		out = append(out, file{path: e.path, data: data})
	}
	return out, hex.EncodeToString(h.Sum(nil)), nil
}

// storeSource is a package of the store: (owner, knowledge, name).
type storeSource struct {
	files       toolconfig.FileStore
	owner, name string
}

func (s storeSource) key() string { return "db\x00" + s.owner + "\x00" + s.name }

func storeFingerprint(list []toolconfig.File) string {
	h := sha256.New()
	for _, f := range list {
		fmt.Fprintf(h, "%s\x00%s\n", f.Path, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s storeSource) fingerprint(ctx context.Context) (string, error) {
	list, err := s.files.ListToolFiles(ctx, s.owner, toolconfig.KindKnowledge, s.name, false)
	if err != nil {
		return "", err
	}
	return storeFingerprint(list), nil
}

func (s storeSource) load(ctx context.Context) ([]file, string, error) {
	list, err := s.files.ListToolFiles(ctx, s.owner, toolconfig.KindKnowledge, s.name, true)
	if err != nil {
		return nil, "", err
	}
	out := make([]file, 0, len(list))
	for _, f := range list {
		if docExt(f.Path) {
			out = append(out, file{path: f.Path, data: f.Data})
		}
	}
	return out, storeFingerprint(list), nil
}

// parse splits every file into points, in path order.
func parse(files []file, maxChars int) []Point {
	var out []Point
	for _, f := range files {
		out = append(out, Split(f.path, string(f.data), maxChars)...)
	}
	return out
}
