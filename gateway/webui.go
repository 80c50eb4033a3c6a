package gateway

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

// The web console (web/, built by `make web` into gateway/webui/dist and
// committed, so `go build` needs no Node). Its files are public; the APIs
// it calls are authenticated as usual. It uses only the public API.
//
//	GET /               302 to /wunder/web/
//	GET /wunder/web     the HTML entry (also /wunder/web/): never cached
//	GET /wunder/web/assets/*   content-hashed names: cached for a year
//	GET /wunder/web/favicon.svg

//go:embed all:webui/dist
var webDist embed.FS

// webCSP is the console's Content-Security-Policy: its own origin only, no
// inline script or style, no plugins; the only frames are its own files
// (the MCP App frame, appFrame), and nobody frames it.
const webCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// appFrame is the console's frame for an MCP App (web/public/app-frame.html):
// the console loads it in an iframe with sandbox="allow-scripts" (an
// opaque origin: no cookies, storage or same-origin reads of wunder) and
// posts it the app's page, which it writes as its document with the CSP
// the console built from the page's _meta.ui.csp in a meta element first.
// The page cannot be the iframe's srcdoc: a srcdoc document inherits the
// console's own CSP, whose script-src 'self' stops every inline script of
// an app. This header is the outer bound: inline script and style, https
// resources and connections; the meta narrows it to the domains the app
// declared (none by default). frame-ancestors 'self': only the console
// embeds it.
const appFrame = "app-frame.html"
const appFrameCSP = "default-src 'none'; script-src 'unsafe-inline' https:; style-src 'unsafe-inline' https:; img-src data: https:; " +
	"media-src data: https:; font-src data: https:; connect-src https: wss:; frame-src https:; object-src 'none'; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'self'"

// webFile is one embedded file, with its gzip form when that is smaller.
type webFile struct {
	body, gz    []byte
	contentType string
}

var (
	webFilesOnce sync.Once
	webFiles     map[string]*webFile // by path under dist, e.g. "assets/index-abc.js"
)

// loadWebFiles reads the embedded build once, compressing what pays.
func loadWebFiles() map[string]*webFile {
	webFilesOnce.Do(func() {
		webFiles = map[string]*webFile{}
		sub, err := fs.Sub(webDist, "webui/dist")
		if err != nil {
			return
		}
		_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(path.Base(p), ".") {
				return err
			}
			b, err := fs.ReadFile(sub, p)
			if err != nil {
				return err
			}
			f := &webFile{body: b, contentType: mime.TypeByExtension(path.Ext(p))}
			if f.contentType == "" {
				f.contentType = "application/octet-stream"
			}
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(b)
			_ = zw.Close()
			if buf.Len() < len(b) {
				f.gz = buf.Bytes()
			}
			webFiles[p] = f
			return nil
		})
	})
	return webFiles
}

func (s *Server) webRoutes() {
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/wunder/web/", http.StatusFound)
	})
	s.mux.HandleFunc("GET /wunder/web", s.handleWeb)
	s.mux.HandleFunc("GET /wunder/web/{path...}", s.handleWeb)
	s.Open("/", "/wunder/web", "/wunder/web/")
}

// handleWeb serves the console's files: index.html for the entry, the
// file itself otherwise, 404 for anything not in the build.
func (s *Server) handleWeb(w http.ResponseWriter, r *http.Request) {
	files := loadWebFiles()
	p := r.PathValue("path")
	if p == "" {
		p = "index.html"
	}
	f, ok := files[p]
	if !ok {
		if len(files) == 0 {
			writeProblem(w, r, http.StatusNotFound, "route_not_found", "the web console is not built into this binary (make web)")
			return
		}
		writeProblem(w, r, http.StatusNotFound, "route_not_found", "no such file in the web console: "+p)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Vary", "Accept-Encoding")
	switch {
	case strings.HasPrefix(p, "assets/"):
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	case p == appFrame:
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", appFrameCSP)
	case p == "index.html":
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", webCSP)
		h.Set("X-Frame-Options", "DENY")
	default:
		h.Set("Cache-Control", "public, max-age=3600")
	}
	body := f.body
	if f.gz != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	_, _ = w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
