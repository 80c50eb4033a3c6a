package lsp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is returned when a file or root would lie outside the
// user's workspace.
var ErrOutsideWorkspace = errors.New("lsp: outside the workspace")

// FindRoot returns the project root of file: the nearest directory, from
// file's directory up to and including workspace, that holds one of
// markers; workspace itself when none does. Both paths are resolved through
// symlinks first, and the root is always the workspace or a directory inside
// it: a file that resolves outside the workspace is [ErrOutsideWorkspace],
// and the search never climbs above the workspace. Markers are plain file
// or directory names; one with a path separator or ".." is ignored.
func FindRoot(workspace, file string, markers []string) (string, error) {
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("lsp: workspace: %w", err)
	}
	f, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", fmt.Errorf("lsp: file: %w", err)
	}
	if !within(ws, f) {
		return "", fmt.Errorf("%w: %s", ErrOutsideWorkspace, filepath.Base(file))
	}
	dir := f
	if info, err := os.Stat(f); err != nil || !info.IsDir() {
		dir = filepath.Dir(f)
	}
	for {
		for _, m := range markers {
			if !validMarker(m) {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				return dir, nil
			}
		}
		if dir == ws {
			return ws, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir || !within(ws, parent) {
			return ws, nil
		}
		dir = parent
	}
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// validMarker reports whether m is a plain name.
func validMarker(m string) bool {
	return m != "" && m != "." && m != ".." && !strings.ContainsAny(m, `/\`) && !strings.ContainsRune(m, 0)
}
