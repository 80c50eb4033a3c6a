package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/i18n"
)

// Every code the gateway can put in a problem has a sentence in every
// language of the catalog. The codes are read from the code itself: the
// errorTable, and the code argument of every call that writes or
// localizes a problem in this package's source. A code that is not a
// literal (or a constant) fails the test, unless the function it is in
// only passes on a code errorTable chose.
func TestEveryProblemCodeInCatalog(t *testing.T) {
	codes := map[string]string{"internal": "classify"}
	for _, e := range errorTable {
		codes[e.code] = "errorTable"
	}
	// codeArg is the index of the code among each writer's arguments.
	codeArg := map[string]int{"writeProblem": 3, "newProblem": 2, "localizedProblem": 2, "localize": 2, "errorMessage": 1,
		"i18n.Messagef": 1, "i18n.Detail": 1, "refuse": 3, "writeLimited": 3}
	// passOn are the functions whose code comes from errorTable (classify)
	// or from their caller.
	passOn := map[string]bool{"writeError": true, "writeProblem": true, "newProblem": true, "localize": true, "errorMessage": true, "batch": true, "refuse": true, "writeLimited": true}

	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				i, ok := codeArg[callee(call.Fun)]
				if !ok || len(call.Args) <= i {
					return true
				}
				calls++
				pos := fset.Position(call.Pos())
				if code, ok := constString(call.Args[i]); ok {
					codes[code] = pos.String()
				} else if !passOn[fn.Name.Name] {
					t.Errorf("%s: %s's code is not a literal; the catalog test cannot see it", pos, callee(call.Fun))
				}
				return true
			})
		}
	}
	if calls < 50 {
		t.Fatalf("only %d problem writers found; the scan is broken", calls)
	}
	for code, where := range codes {
		if !i18n.Has(code) {
			t.Errorf("code %q (%s) has no message in every language of internal/i18n's catalog", code, where)
		}
	}
}

// callee names a call's function: f or pkg.f.
func callee(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
	}
	return ""
}

// constString is the value of a string literal, or of an identifier
// declared as a constant (or variable) with a literal value.
func constString(e ast.Expr) (string, bool) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, err := strconv.Unquote(v.Value)
			return s, err == nil
		}
	case *ast.Ident:
		if v.Obj != nil {
			if spec, ok := v.Obj.Decl.(*ast.ValueSpec); ok {
				for i, name := range spec.Names {
					if name.Name == v.Name && i < len(spec.Values) {
						return constString(spec.Values[i])
					}
				}
			}
		}
	}
	return "", false
}

// Every sentence the core names (its messagef calls, which the front-ends
// translate whole) is in the catalog, and the catalog's English is the
// core's English: the sentinel's text, ": ", the call's format.
func TestCoreSentencesInCatalog(t *testing.T) {
	sentinels := map[string]error{}
	for _, e := range errorTable {
		sentinels[e.err.Error()] = e.err
	}
	files, err := filepath.Glob("../orchestrator/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || callee(call.Fun) != "messagef" || len(call.Args) < 3 {
				return true
			}
			calls++
			pos := fset.Position(call.Pos())
			sentinel, ok := call.Args[0].(*ast.Ident)
			key, okKey := constString(call.Args[1])
			format, okFormat := constString(call.Args[2])
			if !ok || !okKey || !okFormat {
				t.Errorf("%s: messagef needs a sentinel, a literal key and a literal format", pos)
				return true
			}
			if !i18n.Has(key) {
				t.Errorf("%s: key %q has no message in every language of internal/i18n's catalog", pos, key)
				return true
			}
			en := i18n.Message(i18n.English, key)
			text, _, _ := strings.Cut(en, ": ")
			if _, known := sentinels[text]; !known || en != text+": "+format || !strings.HasSuffix(sentinel.Name, sentinelName(text)) {
				t.Errorf("%s: the catalog's English for %q is %q; want %s's text, \": \", %q", pos, key, en, sentinel.Name, format)
			}
			return true
		})
	}
	if calls == 0 {
		t.Fatal("no messagef call found in the core; the scan is broken")
	}
}

// sentinelName is the Go name a sentinel's text comes from: "not found" ->
// "NotFound".
func sentinelName(text string) string {
	var b strings.Builder
	for _, w := range strings.Fields(text) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}
