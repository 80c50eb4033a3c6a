package a2ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// form is a valid batch: a surface with a card of text, inputs bound to
// the data model, a list from a template and a button, and its data.
const form = `[
 {"version":"v0.9","createSurface":{"surfaceId":"form","catalogId":"` + BasicCatalogID + `","theme":{"primaryColor":"#00BFFF"}}},
 {"updateComponents":{"surfaceId":"form","components":[
  {"id":"root","component":"Card","child":"col"},
  {"id":"col","component":"Column","children":["title","name","subscribe","pick","items","row","div"]},
  {"id":"title","component":"Text","text":"Sign up","variant":"h2"},
  {"id":"name","component":"TextField","label":"Name","value":{"path":"/user/name"},
   "checks":[{"condition":{"call":"required","args":{"value":{"path":"/user/name"}}},"message":"Name is required"}]},
  {"id":"subscribe","component":"CheckBox","label":"Subscribe","value":{"path":"/user/subscribe"}},
  {"id":"pick","component":"ChoicePicker","label":"Plan","options":[{"label":"Free","value":"free"},{"label":"Pro","value":"pro"}],"value":{"path":"/user/plan"}},
  {"id":"items","component":"List","children":{"componentId":"item","path":"/items"}},
  {"id":"item","component":"Text","text":{"path":"label"}},
  {"id":"row","component":"Row","children":["greet","send"],"justify":"spaceBetween"},
  {"id":"greet","component":"Text","text":{"call":"formatString","args":{"value":"Hello ${/user/name}"},"returnType":"string"}},
  {"id":"send","component":"Button","child":"send_label","variant":"primary",
   "action":{"event":{"name":"submit","context":{"name":{"path":"/user/name"},"source":"form"}}}},
  {"id":"send_label","component":"Text","text":"Send"},
  {"id":"div","component":"Divider"}
 ]}},
 {"version":"v0.9","updateDataModel":{"surfaceId":"form","path":"/","value":{"user":{"name":"Ada","subscribe":true,"plan":["pro"]},"items":[{"label":"one"},{"label":"two"}]}}}
]`

func TestValidateAcceptsAForm(t *testing.T) {
	b, err := Validate(json.RawMessage(form))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Messages) != 3 || fmt.Sprint(b.Surfaces) != "[form]" {
		t.Fatalf("batch: %d messages, surfaces %v", len(b.Messages), b.Surfaces)
	}
	// The version the model left out is added; the list is the DataPart's data.
	var list []map[string]any
	if err := json.Unmarshal(b.JSON(), &list); err != nil || len(list) != 3 {
		t.Fatalf("JSON: %v %s", err, b.JSON())
	}
	for i, m := range list {
		if m["version"] != Version {
			t.Errorf("message %d has version %v", i, m["version"])
		}
	}
	want := strings.Join([]string{
		"[surface form]",
		"  ## Sign up",
		"  Name: Ada",
		"  [x] Subscribe",
		"  Plan: ( ) Free  (x) Pro",
		"  - one",
		"  - two",
		"  Hello Ada  [Send]",
		"  ---",
	}, "\n")
	if got := b.Text(); got != want {
		t.Fatalf("Text:\n%s\nwant:\n%s", got, want)
	}
	if got := b.Text(); got != want {
		t.Fatalf("Text a second time differs:\n%s", got)
	}
}

// Each broken batch is refused with a problem that names where and what.
func TestValidateRefuses(t *testing.T) {
	create := `{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"` + BasicCatalogID + `"}}`
	comps := func(cs ...string) string {
		return `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[` + strings.Join(cs, ",") + `]}}`
	}
	text := `{"id":"root","component":"Text","text":"hi"}`
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"not JSON", `[{`, []string{"not valid JSON"}},
		{"not a list", `"hello"`, []string{"must be a list"}},
		{"empty", `[]`, []string{"empty"}},
		{"missing", ``, []string{"messages is required"}},
		{"unknown kind", `[{"version":"v0.9","beginRendering":{"surfaceId":"s"}}]`, []string{`messages[0]: unknown key "beginRendering"`, "createSurface, updateComponents, updateDataModel or deleteSurface"}},
		{"two kinds", `[{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"` + BasicCatalogID + `"},"deleteSurface":{"surfaceId":"s"}}]`, []string{"has both createSurface and deleteSurface"}},
		{"no kind", `[{"version":"v0.9"}]`, []string{"needs one of createSurface"}},
		{"wrong version", `[{"version":"v0.8","deleteSurface":{"surfaceId":"s"}}]`, []string{`messages[0].version: must be "v0.9"`}},
		{"no surfaceId", `[{"deleteSurface":{}}]`, []string{"messages[0].deleteSurface: surfaceId is required"}},
		{"other catalog", `[{"createSurface":{"surfaceId":"s","catalogId":"https://example.com/c.json"}}]`, []string{"catalogId: must be", "the basic catalog"}},
		{"bad theme", `[{"createSurface":{"surfaceId":"s","catalogId":"` + BasicCatalogID + `","theme":{"primaryColor":"red"}}}]`, []string{"theme.primaryColor"}},
		{"created twice", `[` + create + `,` + create + `]`, []string{`messages[1].createSurface: surface "s" was already created by messages[0].createSurface`}},
		{"duplicate id", `[` + create + `,` + comps(text, `{"id":"root","component":"Divider"}`) + `]`, []string{`components[1].id: "root" is also the id of messages[1].updateComponents.components[0]`}},
		{"no root", `[` + create + `,` + comps(`{"id":"top","component":"Text","text":"hi"}`) + `]`, []string{`none with id "root"`}},
		{"missing child", `[` + create + `,` + comps(`{"id":"root","component":"Column","children":["a","b"]}`, `{"id":"a","component":"Divider"}`) + `]`, []string{`components[0].children[1]: names component "b", which surface "s" does not define`}},
		{"cycle", `[` + create + `,` + comps(`{"id":"root","component":"Card","child":"c"}`, `{"id":"c","component":"Card","child":"root"}`) + `]`, []string{"contains itself"}},
		{"unknown component", `[` + comps(`{"id":"x","component":"Buton"}`) + `]`, []string{`"Buton" is not a component of the basic catalog`, "Button"}},
		{"unknown property", `[` + comps(`{"id":"x","component":"Text","text":"a","color":"red"}`) + `]`, []string{`components[0].color: Text has no property "color"`}},
		{"required property", `[` + comps(`{"id":"x","component":"Button","child":"y"}`) + `]`, []string{`Button needs "action"`}},
		{"bad enum", `[` + comps(`{"id":"x","component":"Text","text":"a","variant":"title"}`) + `]`, []string{"variant: must be one of h1, h2"}},
		{"bad dynamic", `[` + comps(`{"id":"x","component":"Text","text":42}`) + `]`, []string{"text: must be a string, a data binding"}},
		{"inline child", `[` + comps(`{"id":"x","component":"Column","children":[{"id":"y","component":"Text","text":"a"}]}`) + `]`, []string{"children[0]: must be a string"}},
		{"unknown function", `[` + comps(`{"id":"x","component":"Text","text":{"call":"shout","args":{}}}`) + `]`, []string{`"shout" is not a function of the basic catalog`}},
		{"function args", `[` + comps(`{"id":"x","component":"Text","text":{"call":"formatDate","args":{"value":"2026-01-01"}}}`) + `]`, []string{`formatDate needs "format"`}},
		{"bad action", `[` + comps(`{"id":"x","component":"Button","child":"y","action":{"event":{}}}`) + `]`, []string{"action.event: name is required"}},
		{"bad check", `[` + comps(`{"id":"x","component":"TextField","label":"a","checks":[{"call":"required","message":"m"}]}`) + `]`, []string{`checks[0]: unknown property "call"`, "condition is required"}},
		{"v0.8 shape", `[` + comps(`{"id":"x","component":{"Text":{"text":"a"}}}`) + `]`, []string{"v0.8 shape"}},
		{"type as key", `[` + comps(`{"Text":{"id":"x","text":"a"}}`) + `]`, []string{`names its type as a key ("Text")`}},
		{"bad path", `[{"updateDataModel":{"surfaceId":"s","path":"user/name","value":1}}]`, []string{"path: must be a JSON Pointer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Validate(json.RawMessage(tc.in))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestValidateBounds(t *testing.T) {
	many := make([]string, MaxMessages+1)
	for i := range many {
		many[i] = `{"deleteSurface":{"surfaceId":"s"}}`
	}
	deep := strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth)
	comps := make([]string, MaxComponents+1)
	for i := range comps {
		comps[i] = fmt.Sprintf(`{"id":"c%d","component":"Divider"}`, i)
	}
	for name, tc := range map[string]struct{ in, want string }{
		"messages":   {"[" + strings.Join(many, ",") + "]", "65 messages, over the limit of 64"},
		"bytes":      {`[{"deleteSurface":{"surfaceId":"` + strings.Repeat("x", MaxBytes) + `"}}]`, "over the limit of 262144"},
		"depth":      {`[{"updateDataModel":{"surfaceId":"s","value":` + deep + `}}]`, "levels deep, over the limit of 24"},
		"components": {`[{"updateComponents":{"surfaceId":"s","components":[` + strings.Join(comps, ",") + `]}}]`, "501 components, over the limit of 500"},
		"id":         {`[{"deleteSurface":{"surfaceId":"` + strings.Repeat("x", MaxIDLength+1) + `"}}]`, "over the limit of 128"},
	} {
		_, err := Validate(json.RawMessage(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
}

// Every problem is listed at once (up to a bound), so one more call can
// fix them all.
func TestValidateListsEveryProblem(t *testing.T) {
	var cs []string
	for i := range maxProblems + 5 {
		cs = append(cs, fmt.Sprintf(`{"id":"c%d","component":"Nope"}`, i))
	}
	_, err := Validate(json.RawMessage(`[{"updateComponents":{"surfaceId":"s","components":[` + strings.Join(cs, ",") + `]}}]`))
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != maxProblems || e.More != 5 || !strings.Contains(err.Error(), "(25 problems)") || !strings.Contains(err.Error(), "and 5 more") {
		t.Fatalf("%v", err)
	}
}

// An update of a surface created by an earlier call is checked alone: its
// components may name ones sent before.
func TestValidateUpdateOfAnEarlierSurface(t *testing.T) {
	b, err := Validate(json.RawMessage(`{"updateComponents":{"surfaceId":"s","components":[{"id":"status","component":"Text","text":{"path":"/status"}},{"id":"box","component":"Card","child":"elsewhere"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Text(); got != "[surface s]" { // status has no data here; box names a component sent before
		t.Fatalf("Text %q", got)
	}
	b, err = Validate(json.RawMessage(`[{"updateDataModel":{"surfaceId":"s","path":"/status","value":"done"}},{"deleteSurface":{"surfaceId":"t"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Text(), "[surface s]\n  (data updated: /status)\n[surface t]\n  (closed)"; got != want {
		t.Fatalf("Text %q, want %q", got, want)
	}
}

func TestClientText(t *testing.T) {
	got, err := ClientText(json.RawMessage(`[{"version":"v0.9","action":{"name":"submit","surfaceId":"form","sourceComponentId":"send","timestamp":"2026-12-08T10:00:00Z","context":{"name":"Ada"}}},` +
		`{"version":"v0.9","error":{"code":"VALIDATION_FAILED","surfaceId":"form","path":"/components/0","message":"bad"}}]`))
	want := ActionPrefix + `{"context":{"name":"Ada"},"name":"submit","sourceComponentId":"send","surfaceId":"form","timestamp":"2026-12-08T10:00:00Z"}` + "\n" +
		ErrorPrefix + `{"code":"VALIDATION_FAILED","message":"bad","path":"/components/0","surfaceId":"form"}`
	if err != nil || got != want {
		t.Fatalf("ClientText: %v\n%s\nwant\n%s", err, got, want)
	}
	if got, err := ClientText(json.RawMessage(`{"action":{"name":"go","surfaceId":"s"}}`)); err != nil || got != ActionPrefix+`{"name":"go","surfaceId":"s"}` {
		t.Fatalf("one message: %v %s", err, got)
	}
	for in, want := range map[string]string{
		`[]`: "no message",
		`3`:  "must be a list",
		`[{`: "not JSON",
		`[` + strings.Repeat(`{"action":{"name":"x","surfaceId":"s"}},`, MaxClientMessages) + `{}]`: "over the limit of 16",
	} {
		if _, err := ClientText(json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", in, err, want)
		}
	}
	// A message that is not valid is a line saying why; the others count.
	got, err = ClientText(json.RawMessage(`[{"action":{"name":"x"}},{"createSurface":{}},{"version":"v1","action":{"name":"x","surfaceId":"s"}},{"action":{"name":"go","surfaceId":"s"}}]`))
	want = InvalidPrefix + "message 0: action.surfaceId is required\n" +
		InvalidPrefix + "message 1: needs action or error (a client sends these; createSurface, updateComponents, updateDataModel or deleteSurface are the server's)\n" +
		InvalidPrefix + `message 2: version must be "v0.9", not "v1"` + "\n" +
		ActionPrefix + `{"name":"go","surfaceId":"s"}`
	if err != nil || got != want {
		t.Fatalf("a list with invalid messages: %v\n%s\nwant\n%s", err, got, want)
	}
}

func TestIsMIMEType(t *testing.T) {
	for mt, want := range map[string]bool{MIMEType: true, MIMETypeAlt: true, "Application/JSON+A2UI; charset=utf-8": true, "application/json": false, "": false} {
		if IsMIMEType(mt) != want {
			t.Errorf("IsMIMEType(%q) != %v", mt, want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add(form)
	f.Add(`[{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"List","children":{"componentId":"root","path":"/x"}}]}}]`)
	f.Fuzz(func(t *testing.T, in string) {
		b, err := Validate(json.RawMessage(in))
		if err != nil {
			return
		}
		_ = b.Text()
		if _, err := Validate(b.JSON()); err != nil {
			t.Fatalf("a valid batch's JSON is refused: %v", err)
		}
	})
}
