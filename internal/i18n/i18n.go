// Package i18n holds the messages wunder's front-ends show people, in every
// language wunder speaks (en, zh), and carries a request's language on its
// context.
//
// The gateway decides a request's language once — the request's "language"
// (a body field where the route has one, else the query parameter), else
// Accept-Language, else i18n.default_language — and puts it on the context
// with [WithLanguage]; every front-end's error mapping (problem JSON,
// JSON-RPC of A2A and MCP, Connect) reads it back with [FromContext] and
// asks the catalog:
//
//	title := i18n.Title(lang, http.StatusNotFound)                          // "未找到"
//	msg := i18n.Detail(lang, "not_found", "not found: run run_abc", "not found") // "未找到：run run_abc"
//
// The catalog is keyed by the stable error codes the front-ends already
// put on the wire (problem JSON's code, the lower-cased ErrorInfo reason of
// A2A and Connect). English is the source text and is returned unchanged,
// so English answers stay byte-identical; in another language the detail
// is the catalog's sentence for the code followed by the specific English
// detail (names, ids, values), which wunder does not machine-translate.
//
// This package is a leaf: it imports nothing of wunder's.
package i18n

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The languages of the catalog.
const (
	English = "en"
	Chinese = "zh"
)

// Languages lists the languages every catalog entry exists in.
func Languages() []string { return []string{English, Chinese} }

type ctxKey struct{}

// WithLanguage returns ctx carrying lang, the language of the answers to
// the request ctx belongs to.
func WithLanguage(ctx context.Context, lang string) context.Context {
	return context.WithValue(ctx, ctxKey{}, lang)
}

// FromContext is the language WithLanguage put on ctx; English when none.
func FromContext(ctx context.Context) string {
	if lang, ok := ctx.Value(ctxKey{}).(string); ok && lang != "" {
		return lang
	}
	return English
}

// Title is the title of an HTTP status in lang: http.StatusText in
// English (499 is "Client Closed Request"), the catalog's in another
// language, and English where the catalog has none.
func Title(lang string, status int) string {
	if t, ok := titles[lang][status]; ok && lang != English {
		return t
	}
	if status == 499 {
		return "Client Closed Request"
	}
	return http.StatusText(status)
}

// Message is the catalog's sentence for key in lang, falling back to
// English; "" when the catalog has no such key.
func Message(lang, key string) string {
	if m, ok := messages[lang][key]; ok {
		return m
	}
	return messages[English][key]
}

// Messagef is the catalog's sentence for key in lang, a format, with args
// put in it (the English detail wunder does not translate: ids, numbers).
func Messagef(lang, key string, args ...any) string {
	return fmt.Sprintf(Message(lang, key), args...)
}

// keyed is an error that names its sentence in the catalog and the values
// it takes (the core's orchestrator.KeyedError).
type keyed interface {
	error
	MessageKey() (key string, args []any)
}

// ErrorMessage is err's whole message in lang when err names its sentence
// (see the core's orchestrator.KeyedError), the catalog has it, and nothing
// wrapped err with more text since; ok is false otherwise, and the caller
// falls back to [Detail].
func ErrorMessage(lang string, err error) (msg string, ok bool) {
	var k keyed
	if !errors.As(err, &k) || k.Error() != err.Error() {
		return "", false
	}
	key, args := k.MessageKey()
	if !Has(key) {
		return "", false
	}
	return Messagef(lang, key, args...), true
}

// Has reports whether the catalog has key in every language.
func Has(key string) bool {
	for _, lang := range Languages() {
		if _, ok := messages[lang][key]; !ok {
			return false
		}
	}
	return true
}

// Detail is the client-facing message of an error whose code is key and
// whose English message is english. In English it is english, unchanged.
// In another language it is the catalog's sentence for key, followed by
// what english says beyond its generic part: english without the first of
// prefixes it starts with (a sentinel's text such as "not found", and the
// ": " after it). When nothing is left, or what is left is the key's own
// English sentence, the catalog's sentence is the whole message.
func Detail(lang, key, english string, prefixes ...string) string {
	if lang == English || lang == "" {
		return english
	}
	sentence, ok := messages[lang][key]
	if !ok {
		return english
	}
	rest := strings.TrimSpace(english)
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		if rest == p {
			rest = ""
			break
		}
		if after, ok := strings.CutPrefix(rest, p+": "); ok {
			rest = after
			break
		}
	}
	if rest == "" || rest == messages[English][key] {
		return sentence
	}
	return sentence + sep[lang] + rest
}

// sep joins a catalog sentence and the English detail after it.
var sep = map[string]string{Chinese: "："}
