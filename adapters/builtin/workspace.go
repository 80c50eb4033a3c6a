package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// Workspace is one user's directory, Root/<user_id>/. Every tool reaches the
// file system through [Workspace.Resolve] (or its unexported twin) and then
// through an [os.Root] opened on the workspace, so a path can neither name
// nor follow its way out of it.
type Workspace struct {
	dir  string   // Root/<user_id>, absolute, maybe not created yet
	deny []string // Options.DenyGlobs
}

// Dir returns the workspace directory (it may not exist yet).
func (w *Workspace) Dir() string { return w.dir }

// Resolve maps rel, a path relative to the workspace, to an absolute path
// inside it, creating the workspace on first use. It rejects NUL bytes,
// absolute paths and ".." escapes (errors wrapping
// [orchestrator.ErrInvalidArgument]) and paths matched by the deny globs or
// leading outside through a symlink (errors wrapping
// [orchestrator.ErrPermissionDenied]). Symlinks inside the workspace that
// point inside are followed: the result has them resolved. "" means the
// workspace itself.
func (w *Workspace) Resolve(rel string) (string, error) {
	r, err := w.resolve(rel)
	return r.abs, err
}

// resolved is a path that passed the checks of [Workspace.resolve].
type resolved struct {
	root string // the workspace directory, symlinks resolved
	rel  string // slash-separated, relative to root, symlinks resolved; "." is the root
	abs  string // root joined with rel
	name string // the caller's path, cleaned, for messages
}

func (w *Workspace) resolve(rel string) (resolved, error) {
	if strings.IndexByte(rel, 0) >= 0 {
		return resolved{}, fmt.Errorf("%w: path %q contains a NUL byte", orchestrator.ErrInvalidArgument, rel)
	}
	if rel == "" {
		rel = "."
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return resolved{}, fmt.Errorf("%w: path %q is absolute; use a path relative to the workspace", orchestrator.ErrInvalidArgument, rel)
	}
	clean := path.Clean(filepath.ToSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return resolved{}, fmt.Errorf("%w: path %q escapes the workspace", orchestrator.ErrInvalidArgument, rel)
	}
	if w.denied(clean) {
		return resolved{}, deniedError(clean)
	}
	root, err := w.ensure()
	if err != nil {
		return resolved{}, err
	}
	real := root // ensure resolved the root's symlinks
	if clean != "." {
		if real, err = evalDeepest(root, filepath.Join(root, filepath.FromSlash(clean))); err != nil {
			return resolved{}, pathError(fmt.Sprintf("path %q: %s", clean, scrub(err, root)))
		}
	}
	relReal, err := filepath.Rel(root, real)
	if err != nil || relReal == ".." || strings.HasPrefix(relReal, ".."+string(filepath.Separator)) || filepath.IsAbs(relReal) {
		return resolved{}, fmt.Errorf("%w: path %q leads outside the workspace through a symlink", orchestrator.ErrPermissionDenied, clean)
	}
	relReal = filepath.ToSlash(relReal)
	if w.denied(relReal) {
		return resolved{}, deniedError(clean)
	}
	return resolved{root: root, rel: relReal, abs: real, name: clean}, nil
}

// pathError is a path the resolver cannot follow (a dangling symlink, a
// file where a directory should be): bad input, not a server fault. Its
// message is the text alone; it wraps [orchestrator.ErrInvalidArgument].
type pathError string

func (e pathError) Error() string { return string(e) }
func (e pathError) Unwrap() error { return orchestrator.ErrInvalidArgument }

// open resolves rel and opens the workspace as an [os.Root]; the caller
// closes it and does its I/O on r.rel through it, so a symlink swapped in
// after the check still cannot lead outside.
func (w *Workspace) open(rel string) (*os.Root, resolved, error) {
	r, err := w.resolve(rel)
	if err != nil {
		return nil, resolved{}, err
	}
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return nil, resolved{}, fmt.Errorf("open workspace: %s", scrub(err, r.root))
	}
	return root, r, nil
}

func deniedError(clean string) error {
	return fmt.Errorf("%w: path %q is denied by the workspace policy", orchestrator.ErrPermissionDenied, clean)
}

// ensure creates the workspace directory if needed and returns its real path.
// The directory is there on every call but a user's first, so it is
// resolved first and created only when missing.
func (w *Workspace) ensure() (string, error) {
	root, err := filepath.EvalSymlinks(w.dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(w.dir, 0o750); err != nil {
			return "", fmt.Errorf("builtin: create workspace: %w", err)
		}
		root, err = filepath.EvalSymlinks(w.dir)
	}
	if err != nil {
		return "", fmt.Errorf("builtin: workspace: %w", err)
	}
	return root, nil
}

// evalDeepest resolves the symlinks of abs: of the deepest ancestor that
// exists, with the missing rest appended. A dangling symlink on the way is
// an error, since following it later could create a file anywhere.
func evalDeepest(stop, abs string) (string, error) {
	var rest []string
	p := abs
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", errors.New("a symlink on the path points to nothing")
		}
		parent := filepath.Dir(p)
		if p == stop || parent == p {
			return "", err
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
}

// denied reports whether rel (clean, slash-separated) or one of its parent
// directories matches a deny glob.
func (w *Workspace) denied(rel string) bool {
	if len(w.deny) == 0 || rel == "." {
		return false
	}
	for p := rel; ; {
		for _, g := range w.deny {
			if matchGlob(g, p) {
				return true
			}
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// scrub renders err for a model: the workspace's absolute path is dropped so
// messages name paths as the model does.
func scrub(err error, root string) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
	return strings.ReplaceAll(msg, root, ".")
}
