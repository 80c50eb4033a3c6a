package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// The workspace API (the original wunder's /wunder/workspace routes,
// docs/workspace.md): a user's workspace files, browsed, read, searched,
// downloaded, zipped, uploaded to and changed. The user is the principal's
// (an admin names one with user_id); every path is resolved by the
// backend's one workspace resolver. Reads are here, writes in
// workspace_write.go.
//
//	GET    /wunder/workspace           ?path=&offset=&limit=&keyword=&sort_by=&order=
//	DELETE /wunder/workspace           ?path=  (or ?confirm=true without a path: empty it)
//	GET    /wunder/workspace/content   ?path=&include_content=&max_bytes=&depth=&offset=&limit=&keyword=&sort_by=&order=
//	GET    /wunder/workspace/search    ?query=&path=&regex=&ignore_case=&glob=&limit=&include_files=&include_dirs=&content=
//	GET    /wunder/workspace/archive   ?path=
//	GET    /wunder/workspace/download  ?path=
//	POST   /wunder/workspace/upload    multipart: path, files...
//	POST   /wunder/workspace/dir | move | copy | file | batch   JSON

// Workspaces is what the workspace routes need; cmd/wunder adapts
// adapters/builtin to it. Every method acts in userID's workspace and
// resolves every path it is given there. Errors wrap the core's
// sentinels: a bad path ErrInvalidArgument, a missing one ErrNotFound, one
// in the way ErrConflict, a denied or escaping one ErrPermissionDenied. A
// write, upload or copy that would take the workspace over the user's
// quota returns an error with a method QuotaExceeded() bool that reports
// true (see quotaError), whose message names the quota and its key; the
// routes answer it 413 quota_exceeded.
type Workspaces interface {
	WorkspaceUsage(ctx context.Context, userID string) (WorkspaceUsage, error)
	StatWorkspace(ctx context.Context, userID, path string) (WorkspaceEntry, error)
	ListWorkspace(ctx context.Context, userID, path string, o WorkspaceListOptions) (*WorkspaceListing, error)
	// ReadWorkspaceFile reads at most maxBytes (0 = the read limit) of a
	// text file; a file over the limit or binary comes back flagged.
	ReadWorkspaceFile(ctx context.Context, userID, path string, maxBytes int) (*WorkspaceFile, error)
	OpenWorkspaceFile(ctx context.Context, userID, path string) (io.ReadSeekCloser, WorkspaceEntry, error)
	SearchWorkspace(ctx context.Context, userID string, q WorkspaceSearch) (*WorkspaceSearchResult, error)
	// ArchiveWorkspace plans a zip of path, bounded, before anything is
	// written; the caller closes it.
	ArchiveWorkspace(ctx context.Context, userID, path string) (*WorkspaceArchive, error)
	MkdirWorkspace(ctx context.Context, userID, path string) error
	// WriteWorkspaceFile writes src to path atomically; create allows a
	// new file. An error of src is returned as it is.
	WriteWorkspaceFile(ctx context.Context, userID, path string, src io.Reader, create bool) (WorkspaceEntry, error)
	MoveWorkspace(ctx context.Context, userID, src, dst string) error
	CopyWorkspace(ctx context.Context, userID, src, dst string) (int, error)
	// RemoveWorkspace and EmptyWorkspace return how many denied entries
	// they left in place.
	RemoveWorkspace(ctx context.Context, userID, path string) (int, error)
	EmptyWorkspace(ctx context.Context, userID string) (int, error)
}

// WorkspaceEntry is a file or directory as the routes show it.
type WorkspaceEntry struct {
	Name string `json:"name"`
	// Path is relative to the workspace; "" is the workspace itself.
	Path      string           `json:"path"`
	Type      string           `json:"type"` // file, dir, symlink, other
	Size      int64            `json:"size"`
	UpdatedAt time.Time        `json:"updated_time"`
	Children  []WorkspaceEntry `json:"children,omitempty"`
}

// WorkspaceListOptions select and order a listing (see the routes' doc).
type WorkspaceListOptions struct {
	Depth, Offset, Limit   int
	Keyword, SortBy, Order string
}

// WorkspaceListing is one page of a directory.
type WorkspaceListing struct {
	Entries   []WorkspaceEntry
	Total     int
	Truncated bool
}

// WorkspaceFile is a text file read for display.
type WorkspaceFile struct {
	Entry                       WorkspaceEntry
	Data                        []byte
	Truncated, Binary, TooLarge bool
	Limit                       int64
}

// WorkspaceUsage counts a workspace's content.
type WorkspaceUsage struct {
	Files     int   `json:"files"`
	Dirs      int   `json:"dirs"`
	Bytes     int64 `json:"bytes"`
	Truncated bool  `json:"truncated"`
	// QuotaBytes is the user's workspace quota
	// (workspace.max_bytes_per_user), 0 for none; QuotaUsedBytes is what
	// counts against it (every file, denied ones too).
	QuotaBytes     int64 `json:"quota_bytes"`
	QuotaUsedBytes int64 `json:"quota_used_bytes"`
}

// WorkspaceSearch is a search request.
type WorkspaceSearch struct {
	Query, Path, Glob string
	Regex, IgnoreCase bool
	MaxResults        int
	// Files and Dirs search the names of files and of directories.
	Files, Dirs, Content bool
}

// WorkspaceMatch is a matching line.
type WorkspaceMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// WorkspaceSearchResult is what a search found.
type WorkspaceSearchResult struct {
	Names        []WorkspaceEntry
	Matches      []WorkspaceMatch
	Truncated    bool
	SkippedFiles int
}

// WorkspaceArchive is a planned zip.
type WorkspaceArchive struct {
	Name    string
	Entries int
	Bytes   int64
	WriteTo func(ctx context.Context, w io.Writer) error
	Close   func() error
}

// WorkspaceLimits bound the workspace routes; zero values mean the
// defaults stated.
type WorkspaceLimits struct {
	// MaxFileBytes caps a file read by /content or written by /file
	// (security.max_file_bytes). Default 1 MiB.
	MaxFileBytes int64
	// MaxUploadBytes caps one uploaded file (workspace.max_upload_bytes).
	// Default 64 MiB.
	MaxUploadBytes int64
	// MaxUploadTotalBytes caps an upload request's body
	// (workspace.max_upload_total_bytes). Default 256 MiB.
	MaxUploadTotalBytes int64
}

func (l WorkspaceLimits) withDefaults() WorkspaceLimits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 1 << 20
	}
	if l.MaxUploadBytes <= 0 {
		l.MaxUploadBytes = 64 << 20
	}
	if l.MaxUploadTotalBytes <= 0 {
		l.MaxUploadTotalBytes = 256 << 20
	}
	return l
}

const (
	defaultWorkspacePage = 200
	maxWorkspacePage     = 1000
)

type workspaceRoutes struct {
	ws     Workspaces
	limits WorkspaceLimits
}

func (s *Server) workspaceRoutes() {
	if s.opts.Workspaces == nil {
		return
	}
	const p = "/wunder/workspace"
	h := &workspaceRoutes{ws: s.opts.Workspaces, limits: s.opts.WorkspaceLimits.withDefaults()}
	s.mux.HandleFunc("GET "+p, h.list)
	s.mux.HandleFunc("DELETE "+p, h.remove)
	s.mux.HandleFunc("GET "+p+"/content", h.content)
	s.mux.HandleFunc("GET "+p+"/search", h.search)
	s.mux.HandleFunc("GET "+p+"/archive", h.archive)
	s.mux.HandleFunc("GET "+p+"/download", h.download)
	s.mux.HandleFunc("POST "+p+"/upload", h.upload)
	s.routeBodyLimit(p+"/upload", h.limits.MaxUploadTotalBytes)
	s.mux.HandleFunc("POST "+p+"/dir", h.mkdir)
	s.mux.HandleFunc("POST "+p+"/move", h.move)
	s.mux.HandleFunc("POST "+p+"/copy", h.copy)
	s.mux.HandleFunc("POST "+p+"/file", h.writeFile)
	s.mux.HandleFunc("POST "+p+"/batch", h.batch)
}

// quotaError is what a Workspaces write returns when it would take the
// workspace over the user's quota.
type quotaError interface {
	error
	QuotaExceeded() bool
}

// overQuota reports whether err is a quota refusal.
func overQuota(err error) bool {
	var q quotaError
	return errors.As(err, &q) && q.QuotaExceeded()
}

// writeWorkspaceError is writeError for the workspace routes: a quota
// refusal is 413 quota_exceeded (the request's content is more than the
// user's workspace may take; nothing was written), with its message.
func writeWorkspaceError(w http.ResponseWriter, r *http.Request, err error) {
	if overQuota(err) {
		writeProblem(w, r, http.StatusRequestEntityTooLarge, "quota_exceeded", err.Error())
		return
	}
	writeError(w, r, err)
}

// cleanPath is the path as the responses name it: slash-separated,
// relative, "" for the workspace. It is for display only; the backend
// resolves what the request said.
func cleanPath(p string) string {
	c := path.Clean("/" + strings.ReplaceAll(p, `\`, "/"))
	return strings.TrimPrefix(c, "/")
}

// parentOf is a directory's parent for the listing (nil at the root).
func parentOf(p string) any {
	c := cleanPath(p)
	if c == "" {
		return nil
	}
	if d := path.Dir(c); d != "." {
		return d
	}
	return ""
}

// listOptions reads offset, limit, depth, keyword, sort_by and order.
func listOptions(w http.ResponseWriter, r *http.Request) (WorkspaceListOptions, bool) {
	q := r.URL.Query()
	var o WorkspaceListOptions
	var err error
	if o.Offset, err = queryInt(r, "offset", 0, 1<<30); err == nil {
		if o.Limit, err = queryInt(r, "limit", defaultWorkspacePage, maxWorkspacePage); err == nil {
			o.Depth, err = queryInt(r, "depth", 1, 8)
		}
	}
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", err.Error())
		return o, false
	}
	if o.Limit == 0 {
		o.Limit = defaultWorkspacePage
	}
	o.Keyword, o.SortBy, o.Order = q.Get("keyword"), q.Get("sort_by"), q.Get("order")
	switch {
	case o.SortBy != "" && o.SortBy != "name" && o.SortBy != "size" && o.SortBy != "updated_time":
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "sort_by must be name, size or updated_time")
		return o, false
	case o.Order != "" && o.Order != "asc" && o.Order != "desc":
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "order must be asc or desc")
		return o, false
	}
	return o, true
}

// queryBool reads a boolean query parameter (def when absent).
func queryBool(w http.ResponseWriter, r *http.Request, name string, def bool) (bool, bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, true
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", name+" must be true or false, got "+strconv.Quote(s))
		return false, false
	}
	return b, true
}

// list is GET /wunder/workspace: a page of the directory at path, and at
// the workspace's root a summary of the whole workspace.
func (h *workspaceRoutes) list(w http.ResponseWriter, r *http.Request) {
	user, ok := userScope(w, r)
	if !ok {
		return
	}
	o, ok := listOptions(w, r)
	if !ok {
		return
	}
	p := r.URL.Query().Get("path")
	l, err := h.ws.ListWorkspace(r.Context(), user, p, o)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body := map[string]any{"user_id": user, "path": cleanPath(p), "parent": parentOf(p), "entries": nonNil(l.Entries),
		"total": l.Total, "offset": o.Offset, "limit": o.Limit, "truncated": l.Truncated}
	if cleanPath(p) == "" {
		u, err := h.ws.WorkspaceUsage(r.Context(), user)
		if err != nil {
			writeError(w, r, err)
			return
		}
		body["summary"] = u
	}
	writeJSON(w, r, http.StatusOK, body)
}

// content is GET /wunder/workspace/content: a text file's content, or a
// directory's listing (a tree with depth > 1).
func (h *workspaceRoutes) content(w http.ResponseWriter, r *http.Request) {
	user, ok := userScope(w, r)
	if !ok {
		return
	}
	include, ok := queryBool(w, r, "include_content", true)
	if !ok {
		return
	}
	p := r.URL.Query().Get("path")
	e, err := h.ws.StatWorkspace(r.Context(), user, p)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body := map[string]any{"user_id": user, "path": e.Path, "name": e.Name, "type": e.Type, "size": e.Size, "updated_time": e.UpdatedAt}
	if e.Type == "dir" {
		o, ok := listOptions(w, r)
		if !ok {
			return
		}
		l, err := h.ws.ListWorkspace(r.Context(), user, p, o)
		if err != nil {
			writeError(w, r, err)
			return
		}
		body["format"], body["entries"], body["total"], body["offset"], body["limit"], body["truncated"] = "dir", nonNil(l.Entries), l.Total, o.Offset, o.Limit, l.Truncated
		writeJSON(w, r, http.StatusOK, body)
		return
	}
	if !include {
		writeJSON(w, r, http.StatusOK, body)
		return
	}
	maxBytes, err := queryInt(r, "max_bytes", 0, int(h.limits.MaxFileBytes))
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", err.Error())
		return
	}
	f, err := h.ws.ReadWorkspaceFile(r.Context(), user, p, maxBytes)
	switch {
	case err != nil:
		writeError(w, r, err)
	case f.TooLarge:
		writeProblem(w, r, http.StatusUnprocessableEntity, "file_too_large",
			e.Path+" is "+strconv.FormatInt(f.Entry.Size, 10)+" bytes, over the "+strconv.FormatInt(f.Limit, 10)+"-byte read limit (security.max_file_bytes); fetch it with /wunder/workspace/download")
	case f.Binary:
		writeProblem(w, r, http.StatusUnprocessableEntity, "binary_file", e.Path+" is a binary file; fetch it with /wunder/workspace/download")
	default:
		body["format"], body["content"], body["truncated"] = "text", string(f.Data), f.Truncated
		writeJSON(w, r, http.StatusOK, body)
	}
}
