package llm

import "github.com/wunder/wunder/internal/a2ui"

// The demo's A2UI path: a question containing [A2UIWhen] plays
// [A2UITurns], which call the builtin a2ui tool to show a small form (a
// card with a text field, a checkbox, a choice and a button); pressing the
// button sends the user's action back as a new message ("[a2ui action]
// {...}", with [A2UIAction] as its name), which plays [A2UIActionTurns]:
// the surface says it was received, and the answer quotes what reached
// the model. The console renders the surface; over A2A a client that
// activates the A2UI extension gets it as DataParts, others as text.

// A2UIWhen starts the demo's A2UI form: a question containing it plays
// [A2UITurns].
const A2UIWhen = "A2UI"

// A2UIAction is the name of the demo form's button action; a question
// containing it (the action, as the model reads it) plays
// [A2UIActionTurns].
const A2UIAction = "wunder_demo_send"

// A2UISurface is the demo form's surface id.
const A2UISurface = "wunder_demo"

// A2UITools are the tools the A2UI demo uses.
var A2UITools = []string{"a2ui"}

// A2UITurns show the demo form and say what it is.
func A2UITurns() []Turn {
	text := func(id string, text any, variant string) map[string]any {
		c := map[string]any{"id": id, "component": "Text", "text": text}
		if variant != "" {
			c["variant"] = variant
		}
		return c
	}
	bind := func(path string) map[string]any { return map[string]any{"path": path} }
	components := []any{
		map[string]any{"id": "root", "component": "Card", "child": "body"},
		map[string]any{"id": "body", "component": "Column", "children": []any{"title", "intro", "name", "docs", "frontend", "send", "status"}},
		text("title", "A2UI in wunder", "h3"),
		text("intro", "The model drew this card with the a2ui tool. Fill it in and press Send: your answer goes back to the model as a message.", "body"),
		map[string]any{"id": "name", "component": "TextField", "label": "Your name", "value": bind("/name")},
		map[string]any{"id": "docs", "component": "CheckBox", "label": "Point me to the docs", "value": bind("/docs")},
		map[string]any{"id": "frontend", "component": "ChoicePicker", "label": "Front end to try next", "variant": "mutuallyExclusive",
			"options": []any{
				map[string]any{"label": "A2A", "value": "a2a"}, map[string]any{"label": "MCP", "value": "mcp"},
				map[string]any{"label": "/wunder", "value": "wunder"}, map[string]any{"label": "Connect", "value": "connect"},
			}, "value": bind("/frontend")},
		map[string]any{"id": "send", "component": "Button", "child": "send_label", "variant": "primary",
			"action": map[string]any{"event": map[string]any{"name": A2UIAction,
				"context": map[string]any{"name": bind("/name"), "docs": bind("/docs"), "frontend": bind("/frontend")}}}},
		text("send_label", "Send", ""),
		text("status", bind("/status"), "caption"),
	}
	msg := func(kind string, body map[string]any) map[string]any {
		body["surfaceId"] = A2UISurface
		return map[string]any{"version": "v0.9", kind: body}
	}
	return []Turn{
		{Content: "Here is a small form, drawn with A2UI.",
			ToolCalls: []ScriptCall{{Name: "a2ui", Arguments: map[string]any{"messages": []any{
				msg("createSurface", map[string]any{"catalogId": a2ui.BasicCatalogID}),
				msg("updateComponents", map[string]any{"components": components}),
				msg("updateDataModel", map[string]any{"path": "/", "value": map[string]any{
					"name": "", "docs": true, "frontend": []any{"a2a"}, "status": ""}}),
			}}}}},
		{Content: "The card above is an A2UI v0.9 surface: the console renders it, and an A2A client that activates " +
			"the extension https://a2ui.org/a2a-extension/a2ui/v0.9 gets it as DataParts (others get its text). " +
			"Press Send to hand your answer back to me."},
	}
}

// A2UIActionTurns answer the demo form's action: the surface says it was
// received, and the answer quotes the action as the model read it.
func A2UIActionTurns() []Turn {
	return []Turn{
		{ToolCalls: []ScriptCall{{Name: "a2ui", Arguments: map[string]any{"messages": []any{
			map[string]any{"version": "v0.9", "updateDataModel": map[string]any{"surfaceId": A2UISurface, "path": "/status",
				"value": "Received: the model read your answer."}},
		}}}}},
		{Content: "Thanks! Your button press reached me as this message: " + questionPlaceholder},
	}
}
