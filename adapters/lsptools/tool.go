package lsptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wunder/wunder/lsp"
	"github.com/wunder/wunder/orchestrator"
)

// Name and Alias of the tool.
const (
	Name  = "lsp"
	Alias = "LSP查询"
)

// operations, with the spellings of the original wunder accepted too.
var operations = map[string]string{
	"definition": "definition", "references": "references", "hover": "hover",
	"document_symbol": "document_symbol", "documentsymbol": "document_symbol",
	"workspace_symbol": "workspace_symbol", "workspacesymbol": "workspace_symbol",
	"implementation": "implementation", "call_hierarchy": "call_hierarchy", "callhierarchy": "call_hierarchy",
	"diagnostics": "diagnostics",
}

// needsPosition lists the operations that take line and character.
var needsPosition = map[string]bool{
	"definition": true, "references": true, "hover": true, "implementation": true, "call_hierarchy": true,
}

const schema = `{"type":"object","properties":{` +
	`"operation":{"type":"string","enum":["definition","references","hover","document_symbol","workspace_symbol","implementation","call_hierarchy","diagnostics"]},` +
	`"path":{"type":"string","description":"File path relative to the workspace. For workspace_symbol, any file of the project (it picks the language server)."},` +
	`"line":{"type":"integer","minimum":1,"description":"1-based line, for definition, references, hover, implementation, call_hierarchy."},` +
	`"character":{"type":"integer","minimum":1,"description":"1-based column in characters (not bytes) on that line."},` +
	`"query":{"type":"string","description":"Symbol name or prefix, for workspace_symbol."}` +
	`},"required":["operation","path"]}`

// tool is the lsp tool bound to one user.
type tool struct {
	set  *Set
	user string
}

var _ orchestrator.Tool = (*tool)(nil)

// Spec implements [orchestrator.Tool].
func (t *tool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{
		Name:    Name,
		Aliases: []string{Alias},
		Description: "Code intelligence from language servers (" + t.set.serverList() + "): " +
			"definition, references, hover, document_symbol, workspace_symbol, implementation, " +
			"call_hierarchy and diagnostics for a workspace file. Lines and characters are 1-based.",
		InputSchema: json.RawMessage(schema),
		Source:      "lsp",
		ReadOnly:    true,
	}
}

// Call implements [orchestrator.Tool]. Failures are error results; only a
// cancelled context is returned as an error.
func (t *tool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	if inv == nil {
		inv = &orchestrator.ToolInvocation{}
	}
	out, err := t.run(ctx, inv.Arguments)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return orchestrator.ErrorResult(shortErr(err)), nil
	}
	return &orchestrator.ToolResult{Content: capText(out, t.set.opts.MaxResultBytes)}, nil
}

func (t *tool) run(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return "", err
	}
	op, ok := operations[strings.ToLower(strings.TrimSpace(a.Operation))]
	if !ok {
		return "", fmt.Errorf("unknown operation %q; want one of definition, references, hover, document_symbol, workspace_symbol, implementation, call_hierarchy, diagnostics", a.Operation)
	}
	if a.Path == "" {
		return "", errors.New(`invalid arguments: "path" is required`)
	}
	tg, err := t.set.resolve(t.user, a.Path)
	if err != nil {
		return "", err
	}
	if err := tg.read(t.set.opts.MaxFileBytes); err != nil {
		return "", err
	}
	var pos lsp.Position
	if needsPosition[op] {
		if pos, err = position(tg.text, a.Line, a.Character); err != nil {
			return "", err
		}
	}
	w, release, err := t.set.acquire(ctx, t.user, tg)
	if err != nil {
		return "", err
	}
	defer release()
	mark, err := w.Sync(ctx, tg.abs, tg.text)
	if err != nil {
		return "", err
	}
	doc := lsp.TextDocumentIdentifier{URI: lsp.PathToURI(tg.abs)}
	at := lsp.TextDocumentPositionParams{TextDocument: doc, Position: pos}
	switch op {
	case "definition", "implementation":
		var res json.RawMessage
		if err := w.Call(ctx, "textDocument/"+op, at, &res); err != nil {
			return "", err
		}
		return renderLocations(tg, decodeLocations(res), 3), nil
	case "references":
		params := map[string]any{"textDocument": doc, "position": pos, "context": map[string]bool{"includeDeclaration": true}}
		var res json.RawMessage
		if err := w.Call(ctx, "textDocument/references", params, &res); err != nil {
			return "", err
		}
		return renderLocations(tg, decodeLocations(res), 1), nil
	case "hover":
		var res json.RawMessage
		if err := w.Call(ctx, "textDocument/hover", at, &res); err != nil {
			return "", err
		}
		return renderHover(res), nil
	case "document_symbol":
		var res json.RawMessage
		if err := w.Call(ctx, "textDocument/documentSymbol", map[string]any{"textDocument": doc}, &res); err != nil {
			return "", err
		}
		return renderSymbols(tg, res), nil
	case "workspace_symbol":
		var res json.RawMessage
		if err := w.Call(ctx, "workspace/symbol", map[string]string{"query": a.Query}, &res); err != nil {
			return "", err
		}
		return renderSymbols(tg, res), nil
	case "call_hierarchy":
		return callHierarchy(ctx, w, tg, at)
	default: // diagnostics
		diags, fresh := w.WaitDiagnostics(ctx, mark, t.set.opts.DiagnosticsWait)
		return renderDiagnostics(tg, diags, fresh, t.set.opts.DiagnosticsWait, 50), nil
	}
}

// position converts the tool's 1-based line and character (in code points)
// to the protocol's 0-based UTF-16 position.
func position(text string, line, char int) (lsp.Position, error) {
	if line < 1 || char < 1 {
		return lsp.Position{}, errors.New(`invalid arguments: "line" and "character" are required, 1-based`)
	}
	l, ok := lsp.Line(text, line-1)
	if !ok {
		return lsp.Position{}, fmt.Errorf("line %d is past the end of the file (%d lines)", line, strings.Count(text, "\n")+1)
	}
	return lsp.Position{Line: line - 1, Character: lsp.UTF16Column(l, char-1)}, nil
}

// callHierarchy prepares the item at the position and lists its incoming
// and outgoing calls.
func callHierarchy(ctx context.Context, w *lsp.Worker, tg *target, at lsp.TextDocumentPositionParams) (string, error) {
	var items []json.RawMessage
	if err := w.Call(ctx, "textDocument/prepareCallHierarchy", at, &items); err != nil {
		return "", err
	}
	if len(items) == 0 {
		return "no callable symbol at this position", nil
	}
	var item callItem
	_ = json.Unmarshal(items[0], &item)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", item.Name, tg.location(item.URI, item.SelectionRange.Start))
	for _, dir := range []string{"incoming", "outgoing"} {
		var calls []struct {
			From *callItem `json:"from"`
			To   *callItem `json:"to"`
		}
		if err := w.Call(ctx, "callHierarchy/"+dir+"Calls", map[string]json.RawMessage{"item": items[0]}, &calls); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s calls: %d\n", dir, len(calls))
		for _, c := range calls {
			it := c.From
			if it == nil {
				it = c.To
			}
			if it != nil {
				fmt.Fprintf(&b, "  %s %s\n", it.Name, tg.location(it.URI, it.SelectionRange.Start))
			}
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// callItem is the part of a CallHierarchyItem the tool shows.
type callItem struct {
	Name           string    `json:"name"`
	URI            string    `json:"uri"`
	SelectionRange lsp.Range `json:"selectionRange"`
}
