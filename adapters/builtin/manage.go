package builtin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// The workspace API's side of the Set (the /wunder/workspace routes): the
// same workspaces the tools use, reached the same way — every path through
// [Workspace.resolve], every I/O through an [os.Root] on the workspace, deny
// globs applied to every entry a walk meets. Errors wrap the core's
// sentinels: a bad path [orchestrator.ErrInvalidArgument], a missing one
// [orchestrator.ErrNotFound], one in the way [orchestrator.ErrConflict], a
// denied or escaping one [orchestrator.ErrPermissionDenied]. Messages name
// paths as the caller wrote them, never the host path.

// Entry types of [FileInfo].
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

// FileInfo describes a workspace entry.
type FileInfo struct {
	Name      string
	Path      string // slash-separated, relative to the workspace; "" is the workspace
	Type      string // TypeFile, TypeDir, TypeSymlink or TypeOther
	Size      int64  // 0 for directories
	UpdatedAt time.Time
	// Children of a directory listed with depth > 1 (nil otherwise).
	Children []FileInfo
}

// ListOptions select and order a directory listing.
type ListOptions struct {
	// Depth is how many levels to list: 1 lists the directory's own
	// entries, 2 also their children, and so on (at most 8).
	Depth int
	// Offset and Limit page the directory's own entries (children are not
	// paged, but bounded by maxTreeNodes).
	Offset, Limit int
	// Keyword keeps the entries whose name contains it (case-insensitive).
	Keyword string
	// SortBy is "name" (default), "size" or "updated_time"; Order "asc"
	// (default) or "desc".
	SortBy, Order string
}

// Listing is one page of a directory.
type Listing struct {
	Entries []FileInfo
	// Total is how many entries the directory has after the keyword
	// filter (before paging).
	Total int
	// Truncated says the tree below the page was cut at maxTreeNodes.
	Truncated bool
}

// FileContent is a text file read for display.
type FileContent struct {
	Info FileInfo
	Data []byte // at most the bytes asked for, cut on a rune boundary
	// Truncated: the file is longer than Data.
	Truncated bool
	// Binary: the file looks binary (a NUL byte); Data is nil.
	Binary bool
	// TooLarge: the file is over Limit; Data is nil.
	TooLarge bool
	Limit    int64
}

// Usage counts a workspace's content.
type Usage struct {
	Files, Dirs int
	Bytes       int64
	// Truncated: the count stopped at the tree limit.
	Truncated bool
	// QuotaBytes is the workspace's quota (Options.MaxBytesPerUser), 0 for
	// none; QuotaUsedBytes what counts against it: every file, denied
	// ones included (quota.go). 0 without a quota.
	QuotaBytes, QuotaUsedBytes int64
}

const (
	maxListDepth   = 8
	maxTreeNodes   = 5000 // children listed below one page
	maxUsageWalked = 200000
)

// openAPI resolves rel in userID's workspace and opens it.
func (s *Set) openAPI(userID, rel string) (*Workspace, *os.Root, resolved, error) {
	ws, err := s.Workspace(userID)
	if err != nil {
		return nil, nil, resolved{}, err
	}
	root, r, err := ws.open(rel)
	if err != nil {
		return nil, nil, resolved{}, err
	}
	return ws, root, r, nil
}

// Stat describes the entry at rel (symlinks inside followed).
func (s *Set) Stat(_ context.Context, userID, rel string) (FileInfo, error) {
	_, root, r, err := s.openAPI(userID, rel)
	if err != nil {
		return FileInfo{}, err
	}
	defer root.Close()
	info, err := root.Stat(r.rel)
	if err != nil {
		return FileInfo{}, fsError(r, err)
	}
	return fileInfo(r.rel, info), nil
}

// List pages the directory at rel.
func (s *Set) List(ctx context.Context, userID, rel string, o ListOptions) (*Listing, error) {
	ws, root, r, err := s.openAPI(userID, rel)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	o.Depth = min(max(o.Depth, 1), maxListDepth)
	entries, err := ws.readDir(root, r.rel, o)
	if err != nil {
		return nil, fsError(r, err)
	}
	out := &Listing{Total: len(entries)}
	lo := min(o.Offset, len(entries))
	hi := len(entries)
	if o.Limit > 0 {
		hi = min(lo+o.Limit, hi)
	}
	out.Entries = entries[lo:hi]
	budget := maxTreeNodes
	for i := range out.Entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !ws.fillChildren(root, &out.Entries[i], o, o.Depth-1, &budget) {
			out.Truncated = true
		}
	}
	return out, nil
}

// readDir lists a directory: denied entries left out, the keyword applied,
// sorted as o says.
func (w *Workspace) readDir(root *os.Root, dir string, o ListOptions) ([]FileInfo, error) {
	des, err := fs.ReadDir(root.FS(), dir)
	if err != nil {
		return nil, err
	}
	kw := strings.ToLower(o.Keyword)
	out := make([]FileInfo, 0, len(des))
	for _, d := range des {
		p := path.Join(dir, d.Name())
		if w.denied(p) || (kw != "" && !strings.Contains(strings.ToLower(d.Name()), kw)) {
			continue
		}
		info, err := d.Info()
		if err != nil {
			continue // gone since the read
		}
		out = append(out, fileInfo(p, info))
	}
	sortEntries(out, o.SortBy, o.Order == "desc")
	return out, nil
}

// fillChildren lists e's children down to depth more levels, spending
// budget; it returns false when the budget ran out.
func (w *Workspace) fillChildren(root *os.Root, e *FileInfo, o ListOptions, depth int, budget *int) bool {
	if depth <= 0 || e.Type != TypeDir {
		return true
	}
	kids, err := w.readDir(root, e.Path, ListOptions{SortBy: o.SortBy, Order: o.Order})
	if err != nil {
		return true // unreadable: listed without children
	}
	if len(kids) > *budget {
		kids, *budget = kids[:*budget], 0
		e.Children = kids
		return false
	}
	*budget -= len(kids)
	e.Children = kids
	complete := true
	for i := range e.Children {
		complete = w.fillChildren(root, &e.Children[i], o, depth-1, budget) && complete
	}
	return complete
}

func sortEntries(es []FileInfo, by string, desc bool) {
	slices.SortStableFunc(es, func(a, b FileInfo) int {
		var c int
		switch by {
		case "size":
			c = cmp.Compare(a.Size, b.Size)
		case "updated_time":
			c = a.UpdatedAt.Compare(b.UpdatedAt)
		}
		if c == 0 {
			c = strings.Compare(a.Name, b.Name)
		}
		if desc {
			c = -c
		}
		return c
	})
}

// ReadFile reads the text file at rel for display: at most maxBytes (0 or
// more than the read limit, security.max_file_bytes, mean the limit). A
// file over the limit, or binary, comes back flagged without data; a
// directory is ErrInvalidArgument.
func (s *Set) ReadFile(_ context.Context, userID, rel string, maxBytes int) (*FileContent, error) {
	_, root, r, err := s.openAPI(userID, rel)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	limit := s.opts.MaxFileBytes
	if maxBytes <= 0 || maxBytes > limit {
		maxBytes = limit
	}
	f, err := root.Open(r.rel)
	if err != nil {
		return nil, fsError(r, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fsError(r, err)
	}
	fc := &FileContent{Info: fileInfo(r.rel, info), Limit: int64(limit)}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a file", orchestrator.ErrInvalidArgument, r.name)
	}
	if info.Size() > int64(limit) {
		fc.TooLarge = true
		return fc, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil {
		return nil, fsError(r, err)
	}
	if isBinary(data) {
		fc.Binary = true
		return fc, nil
	}
	if len(data) > maxBytes {
		data, fc.Truncated = data[:maxBytes], true
		for len(data) > 0 && !utf8.Valid(data[max(0, len(data)-utf8.UTFMax):]) {
			data = data[:len(data)-1] // a rune cut in half
		}
	}
	fc.Data = data
	return fc, nil
}

// Open opens the regular file at rel for download; the caller closes it.
func (s *Set) Open(_ context.Context, userID, rel string) (*os.File, FileInfo, error) {
	_, root, r, err := s.openAPI(userID, rel)
	if err != nil {
		return nil, FileInfo{}, err
	}
	defer root.Close()
	f, err := root.Open(r.rel)
	if err != nil {
		return nil, FileInfo{}, fsError(r, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a file; a directory is downloaded through the archive route", orchestrator.ErrInvalidArgument, r.name)
	}
	if err != nil {
		f.Close()
		return nil, FileInfo{}, fsError(r, err)
	}
	return f, fileInfo(r.rel, info), nil
}

// Usage counts the files, directories and bytes of userID's workspace,
// denied entries left out, stopping (Truncated) after a bounded walk. It
// does not create the workspace.
func (s *Set) Usage(ctx context.Context, userID string) (Usage, error) {
	ws, err := s.Workspace(userID)
	if err != nil {
		return Usage{}, err
	}
	if _, err := os.Stat(ws.dir); errors.Is(err, fs.ErrNotExist) {
		return Usage{QuotaBytes: s.opts.MaxBytesPerUser}, nil
	}
	root, r, err := ws.open(".")
	if err != nil {
		return Usage{}, err
	}
	defer root.Close()
	u := Usage{QuotaBytes: s.opts.MaxBytesPerUser}
	if u.QuotaUsedBytes, err = s.quota.used(ctx, r.root); err != nil {
		return Usage{}, fsError(r, err)
	}
	walked := 0
	errFull := errors.New("full")
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if p == "." || err != nil {
			if p != "." {
				return nil // unreadable (a name os.Root's FS refuses): skipped
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if ws.denied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if walked++; walked > maxUsageWalked {
			return errFull
		}
		switch {
		case d.IsDir():
			u.Dirs++
		case d.Type().IsRegular():
			u.Files++
			if info, err := d.Info(); err == nil {
				u.Bytes += info.Size()
			}
		}
		return nil
	})
	if errors.Is(err, errFull) {
		u.Truncated, err = true, nil
	}
	if err != nil {
		return Usage{}, fsError(r, err)
	}
	return u, nil
}

// fileInfo describes the entry at rel (as the root sees it).
func fileInfo(rel string, info fs.FileInfo) FileInfo {
	fi := FileInfo{Name: info.Name(), Path: rel, UpdatedAt: info.ModTime().UTC()}
	if rel == "." {
		fi.Path, fi.Name = "", ""
	}
	switch m := info.Mode(); {
	case m.IsDir():
		fi.Type = TypeDir
	case m.IsRegular():
		fi.Type, fi.Size = TypeFile, info.Size()
	case m&fs.ModeSymlink != 0:
		fi.Type = TypeSymlink
	default:
		fi.Type = TypeOther
	}
	return fi
}

// fsError maps a file system error on r to the core's sentinels, with a
// message that names the caller's path and not the host's.
func fsError(r resolved, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	inner := err
	if errors.As(err, &pe) {
		inner = pe.Err
	}
	switch {
	case errors.Is(err, orchestrator.ErrInvalidArgument), errors.Is(err, orchestrator.ErrNotFound),
		errors.Is(err, orchestrator.ErrConflict), errors.Is(err, orchestrator.ErrPermissionDenied),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s: no such file or directory", orchestrator.ErrNotFound, r.name)
	case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTEMPTY):
		return fmt.Errorf("%w: %s already exists", orchestrator.ErrConflict, r.name)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %s: a parent is not a directory", orchestrator.ErrConflict, r.name)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("%w: %s is a directory", orchestrator.ErrConflict, r.name)
	case errors.Is(err, fs.ErrInvalid):
		return fmt.Errorf("%w: %s is not a valid path here", orchestrator.ErrInvalidArgument, r.name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: %s: permission denied", orchestrator.ErrPermissionDenied, r.name)
	case strings.Contains(inner.Error(), "escapes from parent"), strings.Contains(inner.Error(), "path escapes"):
		// os.Root refused to follow a symlink out (one swapped in after
		// the check).
		return fmt.Errorf("%w: %s leads outside the workspace", orchestrator.ErrPermissionDenied, r.name)
	}
	return fmt.Errorf("builtin: %s: %s", r.name, scrub(inner, r.root))
}
