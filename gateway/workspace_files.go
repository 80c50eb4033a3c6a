package gateway

import (
	"mime"
	"net/http"
	"path"
	"strconv"
)

// The workspace routes that search and hand out files: /search,
// /download, /archive (workspace.go registers them).

const defaultSearchResults = 100

// search is GET /wunder/workspace/search: entry names and (with
// search_content's engine) file contents matching query under path.
func (h *workspaceRoutes) search(w http.ResponseWriter, r *http.Request) {
	user, ok := userScope(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	s := WorkspaceSearch{Query: q.Get("query"), Path: q.Get("path"), Glob: q.Get("glob")}
	if s.Query == "" {
		s.Query = q.Get("keyword") // the original's name
	}
	if s.Query == "" {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "the query parameter is required")
		return
	}
	limit, err := queryInt(r, "limit", defaultSearchResults, 1000)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", err.Error())
		return
	}
	s.MaxResults = max(limit, 1)
	for _, b := range []struct {
		name string
		def  bool
		to   *bool
	}{{"regex", false, &s.Regex}, {"ignore_case", false, &s.IgnoreCase}, {"include_files", true, &s.Files},
		{"include_dirs", true, &s.Dirs}, {"content", true, &s.Content}} {
		if *b.to, ok = queryBool(w, r, b.name, b.def); !ok {
			return
		}
	}
	res, err := h.ws.SearchWorkspace(r.Context(), user, s)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user_id": user, "query": s.Query, "path": cleanPath(s.Path),
		"entries": nonNil(res.Names), "total": len(res.Names), "matches": nonNil(res.Matches),
		"truncated": res.Truncated, "skipped_files": res.SkippedFiles})
}

// attachment is a Content-Disposition for a download named name (RFC 6266,
// non-ASCII names encoded by mime).
func attachment(name string) string {
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": name}); v != "" {
		return v
	}
	return "attachment"
}

// download is GET /wunder/workspace/download: one file, with its type
// from its extension, ranges, and never rendered in the browser.
func (h *workspaceRoutes) download(w http.ResponseWriter, r *http.Request) {
	user, ok := userScope(w, r)
	if !ok {
		return
	}
	if _, ok := required(w, r, "path"); !ok {
		return
	}
	f, e, err := h.ws.OpenWorkspaceFile(r.Context(), user, r.URL.Query().Get("path"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer f.Close()
	ct := mime.TypeByExtension(path.Ext(e.Name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	hd := w.Header()
	hd.Set("Content-Type", ct)
	hd.Set("Content-Disposition", attachment(e.Name))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "sandbox")
	http.ServeContent(w, r, e.Name, e.UpdatedAt, f)
}

// archive is GET /wunder/workspace/archive: a zip of the folder (or file)
// at path, the whole workspace without one. The archive is planned and
// bounded first, so a refusal is a problem; then it is streamed.
func (h *workspaceRoutes) archive(w http.ResponseWriter, r *http.Request) {
	user, ok := userScope(w, r)
	if !ok {
		return
	}
	a, err := h.ws.ArchiveWorkspace(r.Context(), user, r.URL.Query().Get("path"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer a.Close()
	hd := w.Header()
	hd.Set("Content-Type", "application/zip")
	hd.Set("Content-Disposition", attachment(a.Name))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Archive-Entries", strconv.Itoa(a.Entries))
	w.WriteHeader(http.StatusOK)
	if err := a.WriteTo(r.Context(), w); err != nil {
		// The status is sent: the client sees a truncated zip.
		logger(r.Context()).WarnContext(r.Context(), "workspace archive cut short", "err", err)
	}
}
