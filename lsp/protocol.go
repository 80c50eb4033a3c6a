package lsp

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The subset of the Language Server Protocol 3.17 types wunder uses. Field
// names and JSON spellings follow the specification.

// Position is a 0-based line and a 0-based character offset in UTF-16 code
// units, as the protocol defines it.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span of positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Diagnostic severities.
const (
	SeverityError       = 1
	SeverityWarning     = 2
	SeverityInformation = 3
	SeverityHint        = 4
)

// Diagnostic is a problem the server reports for a document.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// TextDocumentPositionParams names a position in a document; it is the
// params of definition, hover, implementation, and (with Context) of
// references.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// TextDocumentIdentifier names a document by URI.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// publishDiagnosticsParams is the params of textDocument/publishDiagnostics.
type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// PathToURI returns the file URI of an absolute path.
func PathToURI(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return u.String()
}

// URIToPath returns the path of a file URI, or "" if uri is not one.
func URIToPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// UTF16Column converts col, a 0-based offset in Unicode code points into
// line (without its line end), to the protocol's 0-based offset in UTF-16
// code units. A col past the end of the line maps to the line's end.
func UTF16Column(line string, col int) int {
	units := 0
	for i, r := range []rune(strings.ToValidUTF8(line, "\uFFFD")) {
		if i >= col {
			break
		}
		units += utf16Len(r)
	}
	return units
}

// RuneColumn converts units, a 0-based offset in UTF-16 code units into
// line, to a 0-based offset in code points. An offset inside a surrogate
// pair counts the whole character; one past the end maps to the line's end.
func RuneColumn(line string, units int) int {
	col, u := 0, 0
	for len(line) > 0 && u < units {
		r, size := utf8.DecodeRuneInString(line)
		line = line[size:]
		u += utf16Len(r)
		col++
	}
	return col
}

func utf16Len(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// Line returns the 0-based line n of text without its line end ("\n" or
// "\r\n"), and whether it exists.
func Line(text string, n int) (string, bool) {
	if n < 0 {
		return "", false
	}
	for i := 0; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return "", false
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return strings.TrimSuffix(text, "\r"), true
}

// languageIDs maps file extensions to LSP language identifiers.
var languageIDs = map[string]string{
	".go": "go", ".mod": "go.mod", ".ts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript",
	".py": "python", ".pyi": "python", ".sh": "shellscript", ".bash": "shellscript",
	".rs": "rust", ".c": "c", ".h": "c", ".cpp": "cpp", ".java": "java",
}

// LanguageID returns the language identifier of a file, from its extension.
func LanguageID(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if id, ok := languageIDs[ext]; ok {
		return id
	}
	return strings.TrimPrefix(ext, ".")
}
