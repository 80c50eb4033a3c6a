package builtin

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// Archive is a zip of a workspace folder, planned (resolved, walked,
// bounded) before a byte is written, so a refusal can still be an error
// response; [Archive.WriteTo] streams it. Close it when done.
type Archive struct {
	// Name is the suggested file name: the folder's name (or the file's)
	// with ".zip", "workspace.zip" for the whole workspace.
	Name    string
	Entries int
	Bytes   int64 // of the files, uncompressed

	root    *os.Root
	base    string // the archived path in the workspace; entries are named relative to its parent
	entries []treeEntry
}

// Archive plans a zip of the file or directory at rel (symlinks inside the
// tree, denied entries and special files left out), bounded by
// MaxTreeEntries and MaxTreeBytes.
func (s *Set) Archive(ctx context.Context, userID, rel string) (*Archive, error) {
	ws, root, r, err := s.openAPI(userID, rel)
	if err != nil {
		return nil, err
	}
	entries, total, err := s.plan(ctx, ws, root, r)
	if err != nil {
		root.Close()
		return nil, err
	}
	a := &Archive{Name: "workspace.zip", Entries: len(entries), Bytes: total, root: root, base: r.rel, entries: entries}
	if r.rel != "." {
		a.Name = path.Base(r.name) + ".zip"
	}
	return a, nil
}

// zipName names entry p in the zip: relative to the archived path's parent
// (so a folder's entries sit under its name), slash-separated, and checked
// to be a plain relative path, so no entry can point out of the folder it is
// extracted into.
func (a *Archive) zipName(e treeEntry) (string, error) {
	name := e.rel
	if a.base != "." {
		if dir := path.Dir(a.base); dir != "." {
			name = strings.TrimPrefix(e.rel, dir+"/")
		}
	}
	if name == "." {
		return "", nil // the workspace itself: no entry
	}
	if !fs.ValidPath(name) || strings.Contains(name, `\`) {
		return "", fmt.Errorf("%w: %q cannot be archived safely", orchestrator.ErrInvalidArgument, e.rel)
	}
	if e.dir {
		name += "/"
	}
	return name, nil
}

// WriteTo writes the zip to w. A file that grew since the plan is cut to
// its planned size.
func (a *Archive) WriteTo(ctx context.Context, w io.Writer) error {
	zw := zip.NewWriter(w)
	for _, e := range a.entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, err := a.zipName(e)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		if err := a.add(zw, name, e); err != nil {
			return err
		}
	}
	return zw.Close()
}

func (a *Archive) add(zw *zip.Writer, name string, e treeEntry) error {
	info, err := a.root.Stat(e.rel)
	if err != nil {
		return err
	}
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: info.ModTime()}
	if e.dir {
		h.SetMode(e.perm | fs.ModeDir)
		h.Method = zip.Store
		_, err := zw.CreateHeader(h)
		return err
	}
	h.SetMode(e.perm)
	f, err := a.root.Open(e.rel)
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.LimitReader(f, e.size))
	return err
}

// Close releases the workspace the archive holds open.
func (a *Archive) Close() error { return a.root.Close() }
