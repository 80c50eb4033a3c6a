package a2awire_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite the A2A error table in docs/a2a.md")

const (
	docBegin = "<!-- a2a-errors:begin (generated from internal/a2awire/errors.go by TestErrorTableInDocs; -update-doc rewrites it) -->\n"
	docEnd   = "<!-- a2a-errors:end -->"
)

// sentinelNames are the Go names of the table's sentinels, as the doc
// shows them.
var sentinelNames = map[error]string{
	orchestrator.ErrInvalidArgument: "orchestrator.ErrInvalidArgument", orchestrator.ErrNotFound: "orchestrator.ErrNotFound",
	orchestrator.ErrUnauthenticated: "orchestrator.ErrUnauthenticated", orchestrator.ErrPermissionDenied: "orchestrator.ErrPermissionDenied",
	orchestrator.ErrBusy: "orchestrator.ErrBusy", orchestrator.ErrUnavailable: "orchestrator.ErrUnavailable",
	orchestrator.ErrCanceled: "orchestrator.ErrCanceled", orchestrator.ErrConflict: "orchestrator.ErrConflict",
	orchestrator.ErrToolNotFound: "orchestrator.ErrToolNotFound",
	w.ErrParse:                   "a2awire.ErrParse", w.ErrInvalidRequest: "a2awire.ErrInvalidRequest", w.ErrMethodNotFound: "a2awire.ErrMethodNotFound",
	w.ErrInternal: "a2awire.ErrInternal", w.ErrTaskNotCancelable: "a2awire.ErrTaskNotCancelable",
	w.ErrPushNotSupported: "a2awire.ErrPushNotSupported", w.ErrUnsupportedOperation: "a2awire.ErrUnsupportedOperation",
	w.ErrContentTypeNotSupported: "a2awire.ErrContentTypeNotSupported", w.ErrInvalidAgentResponse: "a2awire.ErrInvalidAgentResponse",
	w.ErrExtendedCardNotConfigured: "a2awire.ErrExtendedCardNotConfigured", w.ErrExtensionSupportRequired: "a2awire.ErrExtensionSupportRequired",
	w.ErrVersionNotSupported: "a2awire.ErrVersionNotSupported",
}

// docTable renders the table as docs/a2a.md shows it: one line per kind,
// then the aliases.
func docTable(t *testing.T) string {
	kinds := w.Kinds()
	name := func(err error) string {
		n, ok := sentinelNames[err]
		if !ok {
			t.Fatalf("sentinel %v has no name in sentinelNames", err)
		}
		return "`" + n + "`"
	}
	var b, aliases strings.Builder
	b.WriteString("| kind (`errors.Is` on both sides) | JSON-RPC | ErrorInfo reason | HTTP | gRPC | wunder answers it when |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for i, k := range kinds {
		reason := "`" + k.Reason + "`"
		if k.Domain != w.DomainA2A {
			reason += " (" + k.Domain + ")"
		}
		if as := readAs(kinds, i); as.Err != k.Err || firstOf(kinds, k.Err) != i {
			fmt.Fprintf(&aliases, "- %s is sent as %d %s: %s; clients read it as %s.\n", name(k.Err), k.Code, reason, k.Doc, name(as.Err))
			continue
		}
		kind := name(k.Err)
		if k.Core != nil {
			kind += " (also " + name(k.Core) + ")"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %s |\n", kind, k.Code, reason, k.HTTP, k.GRPC, k.Doc)
	}
	return b.String() + "\nAliases, sent in the shape of a row above:\n\n" + aliases.String()
}

// firstOf is the index of the first row of sentinel err.
func firstOf(kinds []w.Kind, err error) int {
	for i, k := range kinds {
		if k.Err == err {
			return i
		}
	}
	return -1
}

// The error table of docs/a2a.md is the table of the code.
func TestErrorTableInDocs(t *testing.T) {
	table := docTable(t)
	path := filepath.Join("..", "..", "docs", "a2a.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no a2a-errors markers", path)
	}
	if doc[i+len(docBegin):j] == table {
		return
	}
	if *updateDoc {
		if err := os.WriteFile(path, []byte(doc[:i+len(docBegin)]+table+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the error table in %s is not the code's; run go test ./internal/a2awire -run TestErrorTableInDocs -update-doc\nwant:\n%s", path, table)
}
