// The package dependency policy of DESIGN.md section 1, as a test (after
// golang/go's src/go/build/deps_test.go): arrows point inward, to the core.
package wunder_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wunder/wunder"

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// rule says what a group of packages may import besides the standard
// library.
type rule struct {
	// may lists the wunder packages (prefixes, relative to the module) the
	// group may import.
	may []string
	// thirdParty reports whether modules outside the standard library and
	// wunder are allowed.
	thirdParty bool
	// noStd lists standard packages the group must not import.
	noStd []string
}

var frontEnd = rule{may: []string{"orchestrator", "accounts", "memory", "mcpsession", "monitor", "internal/sse", "internal/a2awire", "internal/a2ui", "internal/netguard", "internal/i18n", "internal/doc2md", "gen/"}, thirdParty: true}

// policy maps package prefixes (relative to the module, longest match wins)
// to their rule.
var policy = map[string]rule{
	// THE CORE: nothing of ours, no network or database, no SDK.
	"orchestrator":                  {noStd: []string{"net/http", "database/sql", "os/exec"}},
	"orchestrator/orchestratortest": {may: []string{"orchestrator", "internal/testutil/fakemodel", "internal/testutil/storetest"}, thirdParty: true, noStd: []string{"net/http", "database/sql"}},
	// Beside the core: what runs use but the run loop is not (memory,
	// the monitor's aggregation, run-time tool configuration, accounts).
	// Each imports the core (its types, sentinels and public API) and
	// nothing else of ours, and no more of the standard library than the
	// core; the core reaches memory through its own interface
	// (orchestrator.Memory), which cmd/wunder fills. Front-ends call them,
	// storage implements their stores, adapters read tool configuration.
	"accounts":              {may: []string{"orchestrator"}, noStd: []string{"net/http", "database/sql", "os/exec"}},
	"accounts/accountstest": {may: []string{"orchestrator", "accounts", "internal/testutil/storetest"}, thirdParty: true, noStd: []string{"net/http", "database/sql"}},
	"memory":                {may: []string{"orchestrator"}, noStd: []string{"net/http", "database/sql", "os/exec"}},
	"memory/memorytest":     {may: []string{"orchestrator", "memory", "internal/testutil/storetest"}, thirdParty: true, noStd: []string{"net/http", "database/sql"}},
	"monitor":               {may: []string{"orchestrator"}, noStd: []string{"net/http", "database/sql", "os/exec"}},
	"toolconfig":            {may: []string{"orchestrator"}, noStd: []string{"net/http", "database/sql", "os/exec"}},
	// MCP session records, shared by the replicas (mcpserver keeps them,
	// storage implements their store).
	"mcpsession":                {may: []string{"orchestrator"}, noStd: []string{"net/http", "database/sql", "os/exec"}},
	"mcpsession/mcpsessiontest": {may: []string{"orchestrator", "mcpsession", "internal/testutil/storetest"}, noStd: []string{"net/http", "database/sql"}},
	"toolconfig/toolconfigtest": {may: []string{"orchestrator", "toolconfig", "internal/testutil/storetest"}, noStd: []string{"net/http", "database/sql"}},
	// Outward adapters implement the core's interfaces.
	"adapters": {may: []string{"orchestrator", "toolconfig", "internal/sse", "internal/a2awire", "internal/a2ui", "internal/cardsig", "internal/netguard", "internal/proc", "internal/sandbox", "lsp"}, thirdParty: true},
	"storage":  {may: []string{"orchestrator", "accounts", "memory", "mcpsession", "toolconfig", "internal/fsperm"}, thirdParty: true},
	// The lsp tool: the worker pool as a toolset, nothing else of ours.
	"adapters/lsptools": {may: []string{"orchestrator", "lsp", "internal/proc"}},
	// Front-ends call the core; never adapters, storage or config.
	// The gateway owns the one authenticator, which composes internal/auth's
	// hashes and tokens into principals.
	"gateway":   {may: append(slices.Clone(frontEnd.may), "internal/auth"), thirdParty: true},
	"a2a":       frontEnd,
	"agentcard": frontEnd,
	"mcpserver": frontEnd,
	// Leaves.
	"lsp":                       {may: []string{"internal/proc"}, thirdParty: true}, // a leaf: jsonrpc2 framing, and the one subprocess policy
	"internal/sandbox":          {may: []string{"internal/proc"}, thirdParty: true},
	"internal/gctune":           {}, // the standard library alone
	"internal":                  {thirdParty: true},
	"internal/testutil":         {may: []string{"internal/testutil"}, thirdParty: true},
	"gen":                       {may: []string{"gen/"}, thirdParty: true},
	"cmd":                       {may: []string{""}, thirdParty: true},
	"internal/client":           {may: []string{"internal/sse"}, thirdParty: true},
	"internal/testutil/fakellm": {may: []string{"orchestrator", "internal/testutil/fakemodel", "internal/sse"}}, // its streams: the one SSE writer
	// The one fake model: its engine and in-process face, without HTTP so
	// that orchestratortest may offer it; fakellm above is its HTTP face.
	"internal/testutil/fakemodel": {may: []string{"orchestrator"}, noStd: []string{"net/http"}},
	// What the store contract suites share: assertions, the fixed clock,
	// paging through a list.
	"internal/testutil/storetest": {may: []string{"orchestrator"}, thirdParty: true, noStd: []string{"net/http", "database/sql"}},
	// The message catalog and the request's language: a leaf, no imports.
	"internal/i18n": {},
	// Telemetry implements the core's Observer hook (metrics, traces).
	"internal/telemetry": {may: []string{"orchestrator"}, thirdParty: true},
	// The measuring core of `wunder bench` and the admin load test: it
	// drives wunder through its client, and returns the core's sentinels.
	// Capability evaluation: cases run through the core's interfaces.
	"internal/evaluation": {may: []string{"orchestrator"}, thirdParty: true},
	// The starter evaluation cases, embedded.
	"eval":              {},
	"internal/loadtest": {may: []string{"orchestrator", "internal/client", "internal/sse"}, thirdParty: true},
	// A2A wire types and peer client, shared by the a2a front-end and
	// adapters/a2atools (adapters may not import front-ends); it imports the
	// core only for the error sentinels its client returns.
	"internal/a2awire": {may: []string{"orchestrator", "internal/sse"}},
	// A2UI messages: checked by the a2ui tool (adapters/builtin), carried
	// and rendered as text by the front-ends; the standard library only.
	"internal/a2ui": {},

	// Agent card signatures (a leaf: go-jose and JCS); configuration
	// checks that card keys load with the code that uses them.
	"internal/cardsig": {thirdParty: true},
	"internal/config":  {may: []string{"internal/cardsig"}, thirdParty: true},

	// Attachments: documents to Markdown, checked images; the front-ends
	// convert before a run starts, so it returns the core's Attachment and
	// wraps its ErrInvalidArgument. Its subprocess (pdftotext) goes through
	// a Runner that cmd/wunder backs with internal/sandbox.
	"internal/doc2md":            {may: []string{"orchestrator"}, thirdParty: true},
	"internal/doc2md/doc2mdtest": {thirdParty: true},

	// Examples are clients: they see wunder only through the generated code.
	"examples": {may: []string{"gen/"}, thirdParty: true},
	// Benchmark helpers beside wunder (scripts/bench-mcp.sh's bare proxy):
	// the standard library only; the SSE load driver reads with the one
	// SSE reader.
	"scripts":         {},
	"scripts/sseload": {may: []string{"internal/sse"}},
	// The A2A TCK's googleapis descriptors (scripts/a2a-tck.sh): protobuf
	// and genproto, which wunder already depends on, nothing of wunder's.
	"scripts/protoset": {thirdParty: true},
	// Process-level tests of the edge: the real binary, driven from outside.
	"test": {may: []string{"internal/testutil"}, thirdParty: true},
	// The HA check (scripts/ha.sh): a client of replicas behind a balancer,
	// with the load harness of `wunder bench`, the one SSE reader and the
	// fake model.
	"test/ha": {may: []string{"internal/testutil", "internal/client", "internal/loadtest", "internal/sse"}, thirdParty: true},
}

func ruleFor(rel string) (rule, bool) {
	best, found := "", false
	for prefix := range policy {
		if (rel == prefix || strings.HasPrefix(rel, prefix+"/")) && len(prefix) >= len(best) {
			best, found = prefix, true
		}
	}
	return policy[best], found
}

func TestDependencyPolicy(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel == "" {
			continue // this test's own package
		}
		r, ok := ruleFor(rel)
		if !ok {
			t.Errorf("%s: no dependency rule; add one to deps_test.go (and DESIGN.md)", rel)
			continue
		}
		checked++
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, module+"/"):
				dep := strings.TrimPrefix(imp, module+"/")
				if !slices.ContainsFunc(r.may, func(m string) bool {
					return m == "" || dep == m || strings.HasPrefix(dep, strings.TrimSuffix(m, "/")+"/")
				}) {
					t.Errorf("%s imports %s: not allowed (DESIGN.md section 1)", rel, dep)
				}
			case !strings.Contains(strings.Split(imp, "/")[0], "."):
				if slices.Contains(r.noStd, imp) {
					t.Errorf("%s imports %s: the core stays free of it", rel, imp)
				}
			default:
				if !r.thirdParty {
					t.Errorf("%s imports %s: no third-party modules here", rel, imp)
				}
			}
		}
	}
	if checked < 8 {
		t.Fatalf("only %d packages checked; go list found too little", checked)
	}
}

// Only the composition root may import storage, the adapters and the
// configuration.
func TestOnlyCmdWires(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		importer := strings.TrimPrefix(fields[0], module+"/")
		if strings.HasPrefix(importer, "cmd/") {
			continue
		}
		for _, imp := range fields[1:] {
			for _, wired := range []string{"/storage", "/adapters/", "/internal/config"} {
				if strings.HasPrefix(imp, module) && strings.Contains(imp+"/", wired) && !strings.HasPrefix(strings.TrimPrefix(imp, module+"/"), importer) {
					t.Errorf("%s imports %s: only cmd/wunder wires it", importer, imp)
				}
			}
		}
	}
}
