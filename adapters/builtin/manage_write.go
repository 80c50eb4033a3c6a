package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/wunder/wunder/orchestrator"
)

// The workspace API's writes (manage.go has the reads). Each write goes to
// the workspace directory, which the prompt builder reads afresh for the
// next run's summary ([Set.Summary] keeps no cache), so a change made here is
// in the next prompt.

// entry resolves rel for an operation on the entry itself (delete, move, the
// destination of a copy): every check of [Workspace.resolve] on the whole
// path, then the parent resolved and the last element kept as written, so a
// symlink is removed or moved, never what it points to.
func (w *Workspace) entry(rel string) (resolved, error) {
	full, err := w.resolve(rel)
	if err != nil || full.name == "." {
		return full, err
	}
	parent, err := w.resolve(path.Dir(full.name))
	if err != nil {
		return resolved{}, err
	}
	e := parent
	e.rel = path.Join(parent.rel, path.Base(full.name))
	e.abs = filepath.Join(parent.root, filepath.FromSlash(e.rel))
	e.name = full.name
	if w.denied(e.rel) {
		return resolved{}, deniedError(full.name)
	}
	return e, nil
}

// openRoot opens r's workspace as an [os.Root].
func openRoot(r resolved) (*os.Root, error) {
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %s", scrub(err, r.root))
	}
	return root, nil
}

// Mkdir creates the directory at rel and its parents; an existing
// directory is fine, a file in the way is ErrConflict.
func (s *Set) Mkdir(_ context.Context, userID, rel string) error {
	_, root, r, err := s.openAPI(userID, rel)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(r.rel, 0o750); err != nil {
		return fsError(r, err)
	}
	return nil
}

// WriteFile writes src to the file at rel atomically (a temporary file
// renamed over it, parents created), keeping an existing file's mode. A
// missing file is created only when create is set (else ErrNotFound); a
// directory in the way is ErrConflict. When src fails, its error is
// returned as it is and the old file stays; so it does when the stream
// would take the workspace over its quota (a *QuotaError).
func (s *Set) WriteFile(ctx context.Context, userID, rel string, src io.Reader, create bool) (FileInfo, error) {
	_, root, r, err := s.openAPI(userID, rel)
	if err != nil {
		return FileInfo{}, err
	}
	defer root.Close()
	if r.rel == "." {
		return FileInfo{}, fmt.Errorf("%w: name a file, not the workspace", orchestrator.ErrInvalidArgument)
	}
	perm, old := newFilePerm, int64(0)
	switch info, err := root.Stat(r.rel); {
	case err == nil && !info.Mode().IsRegular():
		return FileInfo{}, fmt.Errorf("%w: %s is not a regular file", orchestrator.ErrConflict, r.name)
	case err == nil:
		perm, old = info.Mode().Perm(), info.Size()
	case errors.Is(err, fs.ErrNotExist) && !create:
		return FileInfo{}, fmt.Errorf("%w: %s does not exist (set create_if_missing to create it)", orchestrator.ErrNotFound, r.name)
	case !errors.Is(err, fs.ErrNotExist):
		return FileInfo{}, fsError(r, err)
	}
	res, err := s.quota.reserve(ctx, r.root, 0)
	if err != nil {
		return FileInfo{}, err
	}
	in := &srcReader{r: src}
	counted := &quotaReader{ctx: ctx, r: in, res: res, free: old}
	n, err := writeAtomicFrom(root, r.rel, counted, perm)
	if err != nil {
		res.done(0)
		switch {
		case in.err != nil:
			return FileInfo{}, in.err
		case counted.err != nil:
			return FileInfo{}, counted.err
		}
		return FileInfo{}, fsError(r, err)
	}
	res.done(n - old)
	info, err := root.Stat(r.rel)
	if err != nil {
		return FileInfo{}, fsError(r, err)
	}
	return fileInfo(r.rel, info), nil
}

// srcReader remembers the error of the reader it wraps, so the caller's
// own error (a size limit) is told from a file system one.
type srcReader struct {
	r   io.Reader
	err error
}

func (s *srcReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// Move renames the entry at src to dst (which must not exist; its parents
// are created). A symlink is moved as a link. Moving the workspace, moving a
// directory into itself, or moving a directory that holds denied entries
// (they would leave the deny globs' reach) is refused.
func (s *Set) Move(ctx context.Context, userID, src, dst string) error {
	ws, err := s.Workspace(userID)
	if err != nil {
		return err
	}
	from, to, root, err := ws.pair(src, dst)
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := root.Lstat(from.rel); err != nil {
		return fsError(from, err)
	}
	if held, err := ws.holdsDenied(ctx, root, from.rel); err != nil {
		return fsError(from, err)
	} else if held {
		return fmt.Errorf("%w: %s holds paths denied by the workspace policy; move its other entries instead", orchestrator.ErrPermissionDenied, from.name)
	}
	if err := root.MkdirAll(path.Dir(to.rel), 0o750); err != nil {
		return fsError(to, err)
	}
	if err := root.Rename(from.rel, to.rel); err != nil {
		return fsError(to, err)
	}
	return nil
}

// pair resolves the source and destination of a move or copy and opens the
// workspace: src as an entry, dst as an entry that must not exist and must
// not be src or inside it.
func (w *Workspace) pair(src, dst string) (from, to resolved, root *os.Root, err error) {
	if from, err = w.entry(src); err != nil {
		return
	}
	if to, err = w.entry(dst); err != nil {
		return
	}
	switch {
	case from.rel == ".":
		err = fmt.Errorf("%w: the source is the workspace itself", orchestrator.ErrInvalidArgument)
	case to.rel == "." || to.rel == from.rel:
		err = fmt.Errorf("%w: %s already exists", orchestrator.ErrConflict, to.name)
	case strings.HasPrefix(to.rel, from.rel+"/"):
		err = fmt.Errorf("%w: %s is inside %s", orchestrator.ErrInvalidArgument, to.name, from.name)
	}
	if err != nil {
		return
	}
	if root, err = openRoot(from); err != nil {
		return
	}
	if _, serr := root.Lstat(to.rel); serr == nil {
		root.Close()
		return from, to, nil, fmt.Errorf("%w: %s already exists", orchestrator.ErrConflict, to.name)
	}
	return from, to, root, nil
}

// holdsDenied reports whether the directory at rel holds a denied entry.
func (w *Workspace) holdsDenied(ctx context.Context, root *os.Root, rel string) (bool, error) {
	if len(w.deny) == 0 {
		return false, nil
	}
	found := errors.New("found")
	err := fs.WalkDir(root.FS(), rel, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if w.denied(p) {
			return found
		}
		return nil
	})
	if errors.Is(err, found) {
		return true, nil
	}
	return false, err
}

// treeEntry is one entry of a copy or an archive.
type treeEntry struct {
	rel  string // in the workspace
	dir  bool
	size int64
	perm fs.FileMode
}

// plan walks rel (a file or a directory, symlinks inside followed at the
// top only) and lists what a copy or an archive takes: denied entries,
// symlinks and special files are left out. Over MaxTreeEntries or
// MaxTreeBytes it is ErrInvalidArgument.
func (s *Set) plan(ctx context.Context, ws *Workspace, root *os.Root, r resolved) ([]treeEntry, int64, error) {
	var out []treeEntry
	var total int64
	err := fs.WalkDir(root.FS(), r.rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != r.rel {
				return nil // unreadable (a name os.Root's FS refuses): left out
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if !fs.ValidPath(p) { // not UTF-8: neither walkable nor a zip name
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if ws.denied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone since the read
		}
		e := treeEntry{rel: p, dir: d.IsDir(), perm: info.Mode().Perm()}
		if !e.dir {
			e.size = info.Size()
		}
		total += e.size
		out = append(out, e)
		if len(out) > s.opts.MaxTreeEntries || total > s.opts.MaxTreeBytes {
			return fmt.Errorf("%w: %s holds more than %d entries or %s (workspace.max_tree_entries, max_tree_bytes)",
				orchestrator.ErrInvalidArgument, r.name, s.opts.MaxTreeEntries, formatSize(s.opts.MaxTreeBytes))
		}
		return nil
	})
	if err != nil {
		return nil, 0, fsError(r, err)
	}
	return out, total, nil
}

// Copy copies the file or directory at src (symlinks followed at src only)
// to dst, which must not exist. Denied entries, symlinks and special files
// inside are not copied. A tree over the limits is refused before anything
// is written. It returns the entries copied.
func (s *Set) Copy(ctx context.Context, userID, src, dst string) (int, error) {
	ws, err := s.Workspace(userID)
	if err != nil {
		return 0, err
	}
	from, err := ws.resolve(src)
	if err != nil {
		return 0, err
	}
	// Check the pair with the source followed: the tree copied is the
	// target's.
	_, to, root, err := ws.pair(path.Join(".", from.rel), dst)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	entries, total, err := s.plan(ctx, ws, root, from)
	if err != nil {
		return 0, err
	}
	res, err := s.quota.reserve(ctx, to.root, total)
	if err != nil {
		return 0, err
	}
	if err := root.MkdirAll(path.Dir(to.rel), 0o750); err != nil {
		res.done(0)
		return 0, fsError(to, err)
	}
	for i, e := range entries {
		err := ctx.Err()
		if err == nil {
			target := to.rel
			if e.rel != from.rel {
				target = path.Join(to.rel, strings.TrimPrefix(e.rel, from.rel+"/"))
			}
			err = fsError(to, copyEntry(root, e, target))
		}
		if err != nil {
			res.done(0)
			s.quota.changed(to.root) // a part was copied
			return i, err
		}
	}
	res.done(total)
	return len(entries), nil
}

// copyEntry creates target as a copy of e (a directory, or a file copied
// into a new file: O_EXCL, so nothing is overwritten or followed).
func copyEntry(root *os.Root, e treeEntry, target string) error {
	if e.dir {
		return root.Mkdir(target, 0o750)
	}
	in, err := root.Open(e.rel)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := root.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, e.perm|0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.LimitReader(in, e.size))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove deletes the entry at rel: a file or symlink (the link, not its
// target), or a directory with what it holds — except denied entries, which
// stay (with the directories holding them); kept counts them. The
// workspace itself is emptied with [Set.Empty], not removed here.
func (s *Set) Remove(ctx context.Context, userID, rel string) (kept int, err error) {
	ws, err := s.Workspace(userID)
	if err != nil {
		return 0, err
	}
	e, err := ws.entry(rel)
	if err != nil {
		return 0, err
	}
	if e.rel == "." {
		return 0, fmt.Errorf("%w: name an entry; the whole workspace is emptied with confirm", orchestrator.ErrInvalidArgument)
	}
	root, err := openRoot(e)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	info, err := root.Lstat(e.rel)
	if err != nil {
		return 0, fsError(e, err)
	}
	defer s.quota.changed(e.root)
	if !info.IsDir() {
		return 0, fsError(e, root.Remove(e.rel))
	}
	kept, err = ws.removeTree(ctx, root, e.rel, true)
	return kept, fsError(e, err)
}

// Empty deletes everything in userID's workspace but denied entries (kept
// counts them). A workspace that does not exist is empty.
func (s *Set) Empty(ctx context.Context, userID string) (kept int, err error) {
	ws, err := s.Workspace(userID)
	if err != nil {
		return 0, err
	}
	if _, err := os.Stat(ws.dir); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	root, r, err := ws.open(".")
	if err != nil {
		return 0, err
	}
	defer root.Close()
	defer s.quota.changed(r.root)
	kept, err = ws.removeTree(ctx, root, ".", false)
	return kept, fsError(r, err)
}

// removeTree deletes the directory dir (itself too when self) but its
// denied entries and the directories holding them.
func (w *Workspace) removeTree(ctx context.Context, root *os.Root, dir string, self bool) (kept int, err error) {
	if len(w.deny) == 0 && self {
		return 0, root.RemoveAll(dir)
	}
	var doomed []string
	err = fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != dir {
				return nil // unreadable: its removal below fails quietly, it stays
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p != "." && w.denied(p) {
			kept++
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p != dir || self {
			doomed = append(doomed, p)
		}
		return nil
	})
	if err != nil {
		return kept, err
	}
	// WalkDir lists parents before children: remove in reverse.
	for _, p := range slices.Backward(doomed) {
		if err := root.Remove(p); err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, fs.ErrExist) {
			return kept, err
		}
	}
	return kept, nil
}
