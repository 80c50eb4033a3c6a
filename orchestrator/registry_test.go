package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

type stubTool struct{ spec ToolSpec }

func (s stubTool) Spec() ToolSpec { return s.spec }
func (s stubTool) Call(context.Context, *ToolInvocation) (*ToolResult, error) {
	return &ToolResult{Content: s.spec.Name}, nil
}

func stubs(names ...string) Toolset {
	var list []Tool
	for _, n := range names {
		list = append(list, stubTool{ToolSpec{Name: n, Description: n, InputSchema: json.RawMessage(`{"type":"object"}`)}})
	}
	return StaticToolset{SetName: "stub", List: list}
}

var openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestWireNamesRoundTrip(t *testing.T) {
	long := "server@" + strings.Repeat("x", 80)
	// Two Chinese names of one length: they must not share a wire name.
	names := []string{"read_file", "fs@read_text_file", "a2a@helper", "alice@fs@list", "mcp.server@tool.v2", long, "产品手册", "员工手册", "alice@知识库"}
	reg := NewRegistry("", nil, stubs(names...))
	sel, err := reg.Select(context.Background(), "u", names, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		wire := reg.WireName(n)
		if !openAIName.MatchString(wire) {
			t.Errorf("WireName(%q) = %q: not a valid function name", n, wire)
		}
		tool, ok := sel.Lookup(wire)
		if !ok || tool.Spec().Name != n {
			t.Errorf("Lookup(WireName(%q)=%q) = %v, %v", n, wire, tool, ok)
		}
	}
	if got := reg.CanonicalName("fs__read_text_file"); got != "fs@read_text_file" {
		t.Errorf("CanonicalName = %q", got)
	}
	custom := NewRegistry("-x-", nil)
	if got := custom.WireName("a@b"); got != "a-x-b" {
		t.Errorf("custom separator: %q", got)
	}
}

func TestSelectAlwaysOnAndUnknown(t *testing.T) {
	reg := NewRegistry("", nil, stubs("read_file", "write_file"))
	sel, err := reg.Select(context.Background(), "u", []string{"read_file"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sel.Names(), ","); got != "final_response,read_file" {
		t.Fatalf("names = %s", got)
	}
	if _, ok := sel.Lookup("最终回复"); !ok {
		t.Error("Chinese alias of final_response not resolved")
	}
	_, err = reg.Select(context.Background(), "u", []string{"read_file", "nope", "also_nope"}, nil)
	if !errors.Is(err, ErrToolNotFound) || !strings.Contains(err.Error(), "nope, also_nope") {
		t.Fatalf("err = %v", err)
	}
}

type failingSet struct{}

func (failingSet) Name() string { return "down" }
func (failingSet) Tools(context.Context, string) ([]Tool, error) {
	return nil, errors.New("server unreachable")
}

func TestFailingToolsetDoesNotHideOthers(t *testing.T) {
	reg := NewRegistry("", nil, failingSet{}, stubs("read_file"))
	specs, err := reg.Catalog(context.Background(), "u")
	if err != nil || len(specs) != 5 || specs[3].Name != "read_file" {
		t.Fatalf("catalog = %v, %v; want ask_user, final_response, plan, read_file and reply", specs, err)
	}
}

func TestPromptCacheAndLanguages(t *testing.T) {
	b := newPromptBuilder(2)
	tools := []ToolSpec{{Name: "read_file", Aliases: []string{"读取文件"}, Description: "Read\n a file", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	en := b.build(promptInput{Language: "en", Mode: ModeToolCall, Tools: tools})
	if !strings.Contains(en, "<tool_call>") || !strings.Contains(en, "- read_file (读取文件): Read a file") {
		t.Fatalf("en prompt:\n%s", en)
	}
	zh := b.build(promptInput{Language: "zh", Mode: ModeToolCall, Tools: tools})
	if !strings.Contains(zh, "工具") || zh == en {
		t.Fatalf("zh prompt:\n%s", zh)
	}
	fc := b.build(promptInput{Language: "en", Mode: ModeFunctionCall, Tools: tools, Workspace: "2 files"})
	if strings.Contains(fc, "<tool_call>") || strings.Contains(fc, "input schema") || !strings.Contains(fc, "2 files") {
		t.Fatalf("function_call prompt:\n%s", fc)
	}
	if b.cached() != 2 {
		t.Fatalf("cache holds %d, want its capacity 2", b.cached())
	}
	if again := b.build(promptInput{Language: "en", Mode: ModeFunctionCall, Tools: tools, Workspace: "2 files"}); again != fc {
		t.Fatal("cached prompt differs")
	}
}

// Every field of a prompt's input, and of each of its tool specs, goes
// into its cache key: changing any one changes the key. A field added to
// promptInput or ToolSpec without being hashed fails here (ToolSpec.Meta
// alone is never rendered into a prompt).
func TestPromptKeyCoversEveryField(t *testing.T) {
	base := func() promptInput {
		return promptInput{Language: "en", Mode: ModeToolCall, Workspace: "w", WireSep: "__", Memory: "m", Extra: []string{"e"},
			Tools: []ToolSpec{{Name: "t", Aliases: []string{"a"}, Description: "d", InputSchema: json.RawMessage(`{}`), Source: "s", Owner: "o"}}}
	}
	// change alters the field v: a string gets a letter, a slice another
	// element, a bool flips.
	change := func(t *testing.T, v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				v.SetBytes(append(append([]byte{}, v.Bytes()...), ' '))
				return
			}
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		default:
			t.Fatalf("no way to change a %s", v.Type())
		}
	}
	want := base()
	key := want.key()
	in := reflect.TypeFor[promptInput]()
	for i := range in.NumField() {
		f := in.Field(i)
		if f.Type == reflect.TypeFor[[]ToolSpec]() {
			spec := reflect.TypeFor[ToolSpec]()
			for j := range spec.NumField() {
				if spec.Field(j).Name == "Meta" {
					continue // never rendered into a prompt: front-ends' metadata (an MCP tool's _meta)
				}
				p := base()
				change(t, reflect.ValueOf(&p.Tools[0]).Elem().Field(j))
				if p.key() == key {
					t.Errorf("ToolSpec.%s is not in the prompt's key", spec.Field(j).Name)
				}
			}
		}
		p := base()
		change(t, reflect.ValueOf(&p).Elem().Field(i))
		if p.key() == key {
			t.Errorf("promptInput.%s is not in the prompt's key", f.Name)
		}
	}
	// Lengths go in too: the fields' bytes in another split differ.
	p := base()
	p.Language, p.Mode = "e", "n"+p.Mode
	if p.key() == key {
		t.Error("two inputs whose fields only split the same bytes differently share a key")
	}
	if again := base(); again.key() != key {
		t.Error("one input, two keys")
	}
}

func TestParseTextToolCalls(t *testing.T) {
	content := "Let me look.\n<tool_call>\n```json\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```\n</tool_call>" +
		"<tool_call>{\"name\":\"x\",\"parameters\":\"{\\\"k\\\":1}\"}</tool_call> tail <tool_call>{\"name\":\"cut\",\"arguments\":{}}"
	calls, rest := parseTextToolCalls(content)
	if len(calls) != 3 || rest != "Let me look.\n tail" {
		t.Fatalf("calls = %+v rest = %q", calls, rest)
	}
	if calls[0].call.Name != "read_file" || string(calls[0].call.Arguments) != `{"path":"a"}` {
		t.Errorf("fenced call = %+v", calls[0])
	}
	if string(calls[1].call.Arguments) != `{"k":1}` || calls[2].call.Name != "cut" {
		t.Errorf("calls = %+v", calls)
	}
	for _, bad := range []string{"<tool_call>nope</tool_call>", `<tool_call>{"arguments":{}}</tool_call>`, `<tool_call>{"name":"a","arguments":[1]}</tool_call>`} {
		calls, _ := parseTextToolCalls(bad)
		if len(calls) != 1 || calls[0].err == "" {
			t.Errorf("%s: %+v, want an error", bad, calls)
		}
	}
}

func FuzzParseTextToolCalls(f *testing.F) {
	f.Add("<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>")
	f.Add("<tool_call><tool_call>{}</tool_call></tool_call>")
	f.Fuzz(func(t *testing.T, s string) {
		calls, _ := parseTextToolCalls(s)
		for _, c := range calls {
			if c.err == "" && !json.Valid(c.call.Arguments) {
				t.Fatalf("accepted invalid arguments %q", c.call.Arguments)
			}
		}
	})
}

// WireName remembers its answers up to maxWireMemo names and encodes the
// rest each time, alike.
func TestWireNameMemo(t *testing.T) {
	r := NewRegistry("", nil)
	for round := range 2 {
		for i := range maxWireMemo + 100 {
			name := fmt.Sprintf("user%d@工具%d", i, i)
			if got, want := r.WireName(name), r.wireName(name); got != want {
				t.Fatalf("round %d: WireName(%q) = %q, want %q", round, name, got, want)
			}
		}
	}
	if n := r.wireN.Load(); n != maxWireMemo {
		t.Fatalf("%d names remembered, want %d", n, maxWireMemo)
	}
}

// lister lists its always-on tools alone; asked for all its tools (for a
// run that names none) it fails the test.
type lister struct {
	t      *testing.T
	always []Tool
	all    []Tool
}

func (l lister) Name() string { return "lister" }
func (l lister) Tools(context.Context, string) ([]Tool, error) {
	l.t.Error("asked for all its tools where its always-on ones were enough")
	return l.all, nil
}
func (l lister) AlwaysOnTools(context.Context, string) ([]Tool, error) { return l.always, nil }

// A run that names no tool is offered the always-on tools: of a toolset
// that lists them (AlwaysOnLister), without building its others; of one
// that does not, from all its tools.
func TestSelectNoToolAsksForAlwaysOnTools(t *testing.T) {
	spec := func(name string, always bool) Tool {
		return stubTool{ToolSpec{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`), AlwaysOn: always}}
	}
	pinned := spec("pinned", true)
	l := lister{t: t, always: []Tool{pinned}, all: []Tool{pinned, spec("other", false)}}
	plain := StaticToolset{SetName: "plain", List: []Tool{spec("plain_always", true), spec("plain_other", false)}}
	reg := NewRegistry("", nil, l, plain)
	sel, err := reg.Select(context.Background(), "u", nil, []string{"plain_nope"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sel.Names(), ","); got != "final_response,pinned,plain_always" {
		t.Fatalf("a run naming no tool is offered %s; want final_response,pinned,plain_always", got)
	}
	sel, _ = reg.Select(context.Background(), "u", nil, []string{"pinned"})
	if got := strings.Join(sel.Names(), ","); got != "final_response,plain_always" {
		t.Fatalf("with pinned excluded: %s", got)
	}
}

// An app-only tool (an MCP App's own, ToolSpec.AppOnly) stays in the
// catalog a front-end offers for direct calls, is left out of the grouped
// catalog runs select from, and a run that names it is refused, saying
// why.
func TestAppOnlyToolsAreNeverOffered(t *testing.T) {
	app := stubTool{ToolSpec{Name: "fs@refresh", Source: SourceMCP, AppOnly: true, InputSchema: json.RawMessage(`{"type":"object"}`)}}
	show := stubTool{ToolSpec{Name: "fs@show", Source: SourceMCP, InputSchema: json.RawMessage(`{"type":"object"}`)}}
	reg := NewRegistry("", nil, StaticToolset{SetName: "mcp", List: []Tool{app, show}})
	ctx := context.Background()
	specs, err := reg.Catalog(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "fs@refresh") || !slices.Contains(names, "fs@show") {
		t.Errorf("Catalog = %q: want both", names)
	}
	groups, err := reg.GroupedCatalog(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	if g := groups[GroupMCP]; len(g) != 1 || g[0].Name != "fs@show" {
		t.Errorf("grouped catalog's MCP tools = %v, want fs@show alone", g)
	}
	if _, err := reg.Select(ctx, "u", []string{"fs@show"}, nil); err != nil {
		t.Errorf("Select(fs@show): %v", err)
	}
	_, err = reg.Select(ctx, "u", []string{"fs@show", "fs__refresh"}, nil)
	if !errors.Is(err, ErrToolNotFound) || !strings.Contains(err.Error(), "fs__refresh (visible to MCP Apps only") {
		t.Errorf("Select(fs__refresh) = %v, want ErrToolNotFound saying it is for MCP Apps only", err)
	}
}
