package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/orchestrator"
)

// a2ui shows the user an interactive UI: a batch of A2UI v0.9 messages
// (internal/a2ui checks them against the protocol and the basic catalog),
// sent as an a2ui event (orchestrator/a2ui.go). The front-ends carry it
// their own way: the /wunder stream and the console render it, A2A sends
// DataParts of the A2UI extension or their text. A user's action comes
// back as a new message ("[a2ui action] {...}").
var a2uiDef = &toolDef{
	name:    "a2ui",
	aliases: []string{"界面"},
	description: "Show the user an interactive UI (A2UI v0.9, basic catalog) beside your answer: forms, cards, lists, buttons. " +
		`{"messages": [...]} lists A2UI messages, each {"version":"v0.9", <kind>: {...}}: ` +
		`createSurface {surfaceId, catalogId: "` + a2ui.BasicCatalogID + `"}; ` +
		`updateComponents {surfaceId, components: [{id, component, ...properties}]}, a flat list where one component has id "root" ` +
		`and containers name their children by id (Column/Row/List "children": [ids], Card/Button "child": id); ` +
		`updateDataModel {surfaceId, path: "/a/b", value}; deleteSurface {surfaceId}. ` +
		"Components: Text {text, variant h1-h5|caption|body}, Image {url, description}, Icon {name}, Row, Column, List {children}, " +
		"Card {child}, Tabs {tabs: [{title, child}]}, Modal {trigger, content}, Divider, " +
		`Button {child, variant default|primary|borderless, action: {event: {name, context: {key: value or {"path": "/x"}}}}}, ` +
		"TextField {label, value, variant shortText|longText|number|obscured}, CheckBox {label, value}, " +
		"ChoicePicker {label, options: [{label, value}], value}, Slider {label, min, max, value}, DateTimeInput {label, value}. " +
		`Text and input values may be bound to the data model with {"path": "/x"}. ` +
		`When the user presses a button you receive a message "[a2ui action] {name, surfaceId, sourceComponentId, context}". ` +
		"Errors name the JSON path of each problem: fix them all and call again.",
	schema: `{"type":"object","properties":{` +
		`"messages":{"type":"array","minItems":1,"maxItems":` + fmt.Sprint(a2ui.MaxMessages) + `,"description":"A2UI v0.9 server-to-client messages, applied in order.",` +
		`"items":{"type":"object"}}` +
		`},"required":["messages"]}`,
	readOnly: true,
	run:      runA2UI,
}

// maxA2UIPreview bounds the text fallback quoted in the tool's result.
const maxA2UIPreview = 1000

func runA2UI(_ context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := decodeArgs(c.inv.Arguments, &a, "messages"); err != nil {
		return errorf("%v", err)
	}
	msgs := bytes.TrimSpace(a.Messages)
	if len(msgs) > 0 && msgs[0] == '"' {
		// A model that wrote the list as a JSON string.
		var s string
		if json.Unmarshal(msgs, &s) == nil {
			msgs = []byte(s)
		}
	}
	if len(msgs) == 0 || msgs[0] != '[' {
		return errorf(`invalid arguments: field "messages": want an array of A2UI messages ([{"version":"v0.9","createSurface":{...}}, ...])`)
	}
	b, err := a2ui.Validate(msgs)
	if err != nil {
		return errorf("%v", err)
	}
	ud := orchestrator.A2UIData{ID: orchestrator.NewID("a2ui_"), Messages: b.JSON(), Surfaces: b.Surfaces, Text: b.Text(), CallID: c.inv.CallID}
	c.inv.Emit(orchestrator.EventA2UI, ud)
	preview := ud.Text
	if len(preview) > maxA2UIPreview {
		preview = strings.ToValidUTF8(preview[:maxA2UIPreview], "") + "\n..."
	}
	return &orchestrator.ToolResult{Content: fmt.Sprintf("Sent %d A2UI message(s) for surface %s to the user, as %s. "+
		"A client that cannot render it shows this text:\n%s", len(b.Messages), strings.Join(b.Surfaces, ", "), ud.ID, preview)}, nil
}
