package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/orchestrator"
)

// callA2UI calls the a2ui tool and returns its result and what it emitted.
func callA2UI(t *testing.T, s *Set, args string) (*orchestrator.ToolResult, []orchestrator.A2UIData) {
	t.Helper()
	var got []orchestrator.A2UIData
	inv := &orchestrator.ToolInvocation{UserID: testUser, CallID: "c1", Arguments: json.RawMessage(args), Output: func(string, string) {},
		Emit: func(typ string, data any) {
			if typ != orchestrator.EventA2UI {
				t.Errorf("emitted %s", typ)
			}
			got = append(got, data.(orchestrator.A2UIData))
		}}
	res, err := findTool(t, s, "a2ui").Call(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	return res, got
}

// Valid messages are emitted as one batch with its surfaces and its text
// (the list also when the model wrote it as a JSON string); invalid ones
// are an error result naming each problem, and nothing is emitted.
func TestA2UITool(t *testing.T) {
	s := newTestSet(t, Options{})
	msgs := `[{"createSurface":{"surfaceId":"hello","catalogId":"` + a2ui.BasicCatalogID + `"}},` +
		`{"updateComponents":{"surfaceId":"hello","components":[{"id":"root","component":"Text","text":"Hi there"}]}}]`
	for _, args := range []string{`{"messages":` + msgs + `}`, `{"messages":` + quote(msgs) + `}`} {
		res, got := callA2UI(t, s, args)
		if res.IsError || len(got) != 1 {
			t.Fatalf("%s: %+v, emitted %d", args, res, len(got))
		}
		ud := got[0]
		if !strings.HasPrefix(ud.ID, "a2ui_") || ud.CallID != "c1" || len(ud.Surfaces) != 1 || ud.Surfaces[0] != "hello" ||
			ud.Text != "[surface hello]\n  Hi there" || !strings.Contains(string(ud.Messages), `"version":"v0.9"`) {
			t.Fatalf("emitted %+v (%s)", ud, ud.Messages)
		}
		if !strings.Contains(res.Content, "Sent 2 A2UI message(s) for surface hello") || !strings.Contains(res.Content, "Hi there") {
			t.Fatalf("result: %s", res.Content)
		}
	}
	for args, want := range map[string]string{
		`{}`:              `"messages" is required`,
		`{"messages":[]}`: "messages is empty",
		`{"messages":[{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Txt"}]}}]}`: `messages[0].updateComponents.components[0].component: "Txt" is not a component of the basic catalog`,
	} {
		res, got := callA2UI(t, s, args)
		if !res.IsError || len(got) != 0 || !strings.Contains(res.Content, want) {
			t.Errorf("%s: %+v, emitted %d; want an error with %q", args, res, len(got), want)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
