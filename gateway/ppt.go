package gateway

import (
	"embed"
	"mime"
	"net/http"
	"path"
)

// The introduction deck (the original wunder's /wunder/ppt): a short slide
// show of what wunder is, in English and Chinese, hand-written and
// embedded (gateway/ppt: one HTML page, its style and its script; no
// build step). Public, like the console's files.
//
//	GET /wunder/ppt           the deck (also /wunder/ppt/); ?lang=en|zh, #N opens slide N
//	GET /wunder/ppt/{file}    ppt.css, ppt.js
//	GET /wunder/ppt-en        302 to /wunder/ppt?lang=en (the original's English deck)

//go:embed ppt
var pptFiles embed.FS

// pptCSP: its own files only, no inline script or style; it may be framed
// by this origin (the original embedded its deck).
const pptCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

func (s *Server) pptRoutes() {
	s.mux.HandleFunc("GET /wunder/ppt", handlePPT)
	s.mux.HandleFunc("GET /wunder/ppt/{file...}", handlePPT)
	s.mux.HandleFunc("GET /wunder/ppt-en", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/wunder/ppt?lang=en", http.StatusFound)
	})
	s.Open("/wunder/ppt", "/wunder/ppt/", "/wunder/ppt-en")
}

// handlePPT serves the deck's page, or one of its two files; 404 for
// anything else.
func handlePPT(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	switch name {
	case "", "index.html":
		name = "index.html"
	case "ppt.css", "ppt.js":
	default:
		writeProblem(w, r, http.StatusNotFound, "route_not_found", "no such file in the introduction deck: "+name)
		return
	}
	body, err := pptFiles.ReadFile("ppt/" + name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	if name == "index.html" {
		h.Set("Content-Security-Policy", pptCSP)
	}
	_, _ = w.Write(body)
}
