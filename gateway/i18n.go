package gateway

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Languages: a request's language (the "language" field), else its
// Accept-Language header, chooses the language of a run's prompts; an
// alias (zh-CN) names a supported language (zh). GET /wunder/i18n tells a
// client what there is; it needs no credentials (a login page asks it).

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
