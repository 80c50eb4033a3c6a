package lsptools

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wunder/wunder/lsp"
)

// location renders uri and pos as path:line:col, 1-based, the column in
// characters. The line of a file outside the workspace is never read, so
// its column stays in UTF-16 units.
func (t *target) location(uri string, pos lsp.Position) string {
	abs := lsp.URIToPath(uri)
	if abs == "" {
		return uri
	}
	col := pos.Character
	if text, ok := t.lines(abs); ok {
		if l, ok := lsp.Line(text, pos.Line); ok {
			col = lsp.RuneColumn(l, pos.Character)
		}
	}
	return fmt.Sprintf("%s:%d:%d", t.relPath(abs), pos.Line+1, col+1)
}

// lines returns the text of a workspace file (the call's own file from
// memory); never a file outside the workspace.
func (t *target) lines(abs string) (string, bool) {
	if abs == t.abs {
		return t.text, true
	}
	if !t.inside(abs) {
		return "", false
	}
	info, err := os.Stat(abs)
	if err != nil || !info.Mode().IsRegular() || info.Size() > 1<<20 {
		return "", false
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", false
	}
	return string(data), true
}

// decodeLocations reads Location | Location[] | LocationLink[] | null.
func decodeLocations(raw json.RawMessage) []lsp.Location {
	var many []struct {
		lsp.Location
		TargetURI            string    `json:"targetUri"`
		TargetSelectionRange lsp.Range `json:"targetSelectionRange"`
	}
	if json.Unmarshal(raw, &many) != nil {
		var one lsp.Location
		if json.Unmarshal(raw, &one) == nil && one.URI != "" {
			return []lsp.Location{one}
		}
		return nil
	}
	out := make([]lsp.Location, 0, len(many))
	for _, l := range many {
		if l.TargetURI != "" {
			out = append(out, lsp.Location{URI: l.TargetURI, Range: l.TargetSelectionRange})
		} else if l.URI != "" {
			out = append(out, l.Location)
		}
	}
	return out
}

// renderLocations lists locations with context lines of workspace files
// (context lines in all: the location's line in the middle).
func renderLocations(t *target, locs []lsp.Location, context int) string {
	if len(locs) == 0 {
		return "no results"
	}
	var b strings.Builder
	if len(locs) > 1 {
		fmt.Fprintf(&b, "%d results\n", len(locs))
	}
	for _, l := range locs {
		b.WriteString(t.location(l.URI, l.Range.Start))
		text, ok := t.lines(lsp.URIToPath(l.URI))
		if !ok {
			b.WriteString("\n")
			continue
		}
		if context <= 1 {
			if line, ok := lsp.Line(text, l.Range.Start.Line); ok {
				fmt.Fprintf(&b, ": %s", strings.TrimSpace(line))
			}
			b.WriteString("\n")
			continue
		}
		b.WriteString("\n")
		half := context / 2
		for n := l.Range.Start.Line - half; n <= l.Range.Start.Line+half; n++ {
			if line, ok := lsp.Line(text, n); ok && n >= 0 {
				mark := " "
				if n == l.Range.Start.Line {
					mark = ">"
				}
				fmt.Fprintf(&b, "  %s%5d | %s\n", mark, n+1, line)
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// renderHover reads Hover.contents: MarkupContent, MarkedString or
// MarkedString[].
func renderHover(raw json.RawMessage) string {
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &h) != nil || len(h.Contents) == 0 || string(h.Contents) == "null" {
		return "no hover information"
	}
	var parts []string
	var one struct {
		Value string `json:"value"`
	}
	var list []json.RawMessage
	var s string
	switch {
	case json.Unmarshal(h.Contents, &s) == nil:
		parts = append(parts, s)
	case json.Unmarshal(h.Contents, &list) == nil:
		for _, item := range list {
			if json.Unmarshal(item, &s) == nil {
				parts = append(parts, s)
			} else if json.Unmarshal(item, &one) == nil {
				parts = append(parts, one.Value)
			}
		}
	case json.Unmarshal(h.Contents, &one) == nil:
		parts = append(parts, one.Value)
	}
	out := strings.TrimSpace(strings.Join(parts, "\n\n"))
	if out == "" {
		return "no hover information"
	}
	return out
}

// symbol is a DocumentSymbol, SymbolInformation or WorkspaceSymbol.
type symbol struct {
	Name           string          `json:"name"`
	Kind           int             `json:"kind"`
	Detail         string          `json:"detail"`
	ContainerName  string          `json:"containerName"`
	SelectionRange *lsp.Range      `json:"selectionRange"`
	Location       json.RawMessage `json:"location"`
	Children       []symbol        `json:"children"`
}

func renderSymbols(t *target, raw json.RawMessage) string {
	var syms []symbol
	if json.Unmarshal(raw, &syms) != nil || len(syms) == 0 {
		return "no symbols"
	}
	var b strings.Builder
	var walk func(list []symbol, depth int)
	walk = func(list []symbol, depth int) {
		for _, s := range list {
			fmt.Fprintf(&b, "%s%s %s", strings.Repeat("  ", depth), kindName(s.Kind), s.Name)
			if s.Detail != "" {
				fmt.Fprintf(&b, " %s", s.Detail)
			}
			switch {
			case s.SelectionRange != nil:
				fmt.Fprintf(&b, " (line %d)", s.SelectionRange.Start.Line+1)
			case len(s.Location) > 0:
				var loc lsp.Location
				if json.Unmarshal(s.Location, &loc) == nil && loc.URI != "" {
					fmt.Fprintf(&b, " %s", t.location(loc.URI, loc.Range.Start))
				}
			}
			if s.ContainerName != "" {
				fmt.Fprintf(&b, " in %s", s.ContainerName)
			}
			b.WriteString("\n")
			walk(s.Children, depth+1)
		}
	}
	walk(syms, 0)
	return strings.TrimRight(b.String(), "\n")
}

var kinds = []string{"", "file", "module", "namespace", "package", "class", "method", "property", "field",
	"constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean",
	"array", "object", "key", "null", "enum_member", "struct", "event", "operator", "type_parameter"}

func kindName(k int) string {
	if k > 0 && k < len(kinds) {
		return kinds[k]
	}
	return "symbol"
}

var severities = []string{"", "error", "warning", "info", "hint"}

// renderDiagnostics summarises diagnostics, errors first, at most max lines.
func renderDiagnostics(t *target, diags []lsp.Diagnostic, fresh bool, wait time.Duration, max int) string {
	head := fmt.Sprintf("LSP (%s) on %s: ", t.srv.ID, t.rel)
	if len(diags) == 0 {
		if !fresh {
			return head + fmt.Sprintf("no diagnostics within %s", wait)
		}
		return head + "no problems"
	}
	slices.SortStableFunc(diags, func(a, b lsp.Diagnostic) int {
		sa, sb := a.Severity, b.Severity
		if sa == 0 {
			sa = lsp.SeverityError
		}
		if sb == 0 {
			sb = lsp.SeverityError
		}
		if sa != sb {
			return sa - sb
		}
		return a.Range.Start.Line - b.Range.Start.Line
	})
	counts := map[int]int{}
	for _, d := range diags {
		counts[max1(d.Severity)]++
	}
	var parts []string
	for sev := 1; sev <= 4; sev++ {
		if n := counts[sev]; n > 0 {
			noun := severities[sev]
			if n > 1 {
				noun += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, noun))
		}
	}
	var b strings.Builder
	b.WriteString(head + strings.Join(parts, ", "))
	if !fresh {
		b.WriteString(" (may be stale: no update within " + wait.String() + ")")
	}
	for i, d := range diags {
		if i == max {
			fmt.Fprintf(&b, "\n  ... and %d more", len(diags)-max)
			break
		}
		msg := oneLine(strings.TrimSpace(d.Message), 200)
		fmt.Fprintf(&b, "\n  %s %s: %s", t.location(lsp.PathToURI(t.abs), d.Range.Start), severities[max1(d.Severity)], msg)
		if d.Source != "" {
			fmt.Fprintf(&b, " (%s)", d.Source)
		}
	}
	return b.String()
}

func max1(sev int) int {
	if sev < 1 || sev > 4 {
		return lsp.SeverityError
	}
	return sev
}

// capText cuts s to at most n bytes, on a line boundary where possible.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := prefix(s, n)
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		cut = cut[:i]
	}
	return cut + fmt.Sprintf("\n... (truncated; %d of %d bytes shown)", len(cut), len(s))
}
