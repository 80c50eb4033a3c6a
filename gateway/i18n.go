package gateway

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wunder/wunder/internal/i18n"
)

// Languages: a request's language (the "language" field), else its
// Accept-Language header, chooses the language of a run's prompts and of
// the messages wunder answers with (problem JSON, JSON-RPC and Connect
// errors), else i18n.default_language; an alias (zh-CN) names a supported
// language (zh). GET /wunder/i18n tells a client what there is; it needs
// no credentials (a login page asks it).
//
// The middleware withLanguage decides the messages' language before any
// handler runs, from the "language" query parameter, else Accept-Language,
// else the default, and puts it on the context (internal/i18n); a handler
// whose body has a "language" field refines it with withBodyLanguage once
// the body is read. Every error writer reads it back from the context.

// withLanguage puts the request's language on its context.
func (s *Server) withLanguage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(i18n.WithLanguage(r.Context(), s.messageLanguage(r))))
	})
}

// messageLanguage is the language of a request's messages: its "language"
// query parameter, else Accept-Language, else the default. A name no
// supported language answers to is passed over.
func (s *Server) messageLanguage(r *http.Request) string {
	l := s.live.Load().i18n
	if r.URL.RawQuery != "" {
		if lang, ok := l.resolve(r.URL.Query().Get("language")); ok {
			return lang
		}
	}
	if lang := l.fromAcceptLanguage(r.Header.Get("Accept-Language")); lang != "" {
		return lang
	}
	return l.Default
}

// HeaderLanguage is the language of the messages answering a request with
// header h and no language of its own: Accept-Language, else the default.
// It is for front-ends that see a call's headers but not its HTTP request
// (MCP's tool calls).
func (s *Server) HeaderLanguage(h http.Header) string {
	l := s.live.Load().i18n
	if lang := l.fromAcceptLanguage(h.Get("Accept-Language")); lang != "" {
		return lang
	}
	return l.Default
}

// withBodyLanguage returns r with the messages' language set to the body's
// "language" field, when it names a supported language; else r as it is.
func (s *Server) withBodyLanguage(r *http.Request, requested string) *http.Request {
	if requested == "" {
		return r
	}
	if lang, ok := s.live.Load().i18n.resolve(requested); ok {
		return r.WithContext(i18n.WithLanguage(r.Context(), lang))
	}
	return r
}

func (l I18n) normalized() I18n {
	if len(l.Supported) == 0 {
		l.Supported = []string{"en", "zh"}
	}
	if l.Default == "" {
		l.Default = l.Supported[0]
	}
	aliases := make(map[string]string, len(l.Aliases))
	for k, v := range l.Aliases {
		aliases[strings.ToLower(strings.TrimSpace(k))] = v
	}
	l.Aliases = aliases
	return l
}

// resolve maps a language name to a supported language: itself, its alias,
// or its primary subtag (en-NZ -> en); ok is false when none matches.
func (l I18n) resolve(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return "", false
	}
	if slices.Contains(l.Supported, n) {
		return n, true
	}
	if v, ok := l.Aliases[n]; ok {
		return v, true
	}
	if primary, _, found := strings.Cut(n, "-"); found && slices.Contains(l.Supported, primary) {
		return primary, true
	}
	return "", false
}

// language is the language a request's run uses: requested (resolved
// through the aliases; an unknown name is passed on for the core to
// refuse), else the best supported language of Accept-Language, else ""
// (the default).
func (s *Server) language(r *http.Request, requested string) string {
	l := s.live.Load().i18n
	if requested != "" {
		if lang, ok := l.resolve(requested); ok {
			return lang
		}
		return requested
	}
	return l.fromAcceptLanguage(r.Header.Get("Accept-Language"))
}

// fromAcceptLanguage picks the supported language with the highest q in an
// Accept-Language header (RFC 9110 section 12.5.4); "" when none.
func (l I18n) fromAcceptLanguage(h string) string {
	best, bestQ := "", 0.0
	for _, part := range strings.Split(h, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			q = f
		}
		if lang, ok := l.resolve(tag); ok && q > bestQ {
			best, bestQ = lang, q
		}
	}
	return best
}

// handleI18n is GET /wunder/i18n.
func (s *Server) handleI18n(w http.ResponseWriter, r *http.Request) {
	l := s.live.Load().i18n
	aliases := l.Aliases
	if aliases == nil {
		aliases = map[string]string{}
	}
	w.Header().Set("Content-Language", l.Default)
	writeJSON(w, r, http.StatusOK, map[string]any{
		"default_language": l.Default, "supported_languages": l.Supported, "aliases": aliases,
	})
}
