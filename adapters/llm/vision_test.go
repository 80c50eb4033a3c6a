package llm_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

// A user message with image attachments (left on it by the core for a
// model with vision) is sent as OpenAI content parts: its text, then one
// image_url part per image; other messages keep a string content.
func TestImageParts(t *testing.T) {
	t.Parallel()
	fs := newServer(t, streamOf(text("ok"), finish("stop")))
	c := fs.client(t, func(c *llm.Config) {})
	img := "data:image/png;base64,iVBORw0KGgo="
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{
		{Role: orchestrator.RoleUser, Content: "plain"},
		{Role: orchestrator.RoleAssistant, Content: "ok"},
		{Role: orchestrator.RoleUser, Content: "what is this?\n\n[Attachment: a.png (image/png): the image follows]",
			Attachments: []orchestrator.Attachment{{Type: orchestrator.AttachmentImage, Name: "a.png", MimeType: "image/png", Content: img}}},
	}}
	if r := collect(t, context.Background(), c, req); r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	got := fs.requests()[0].Body["messages"]
	want := []any{
		map[string]any{"role": "user", "content": "plain"},
		map[string]any{"role": "assistant", "content": "ok"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "what is this?\n\n[Attachment: a.png (image/png): the image follows]"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": img}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
