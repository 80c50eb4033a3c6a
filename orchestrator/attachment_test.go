package orchestrator_test

import (
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// An image part a model with vision gets counts ImageTokens; text
// attachments are already in the content.
func TestEstimateCountsImages(t *testing.T) {
	text := orchestrator.Message{Role: orchestrator.RoleUser, Content: "look"}
	img := text
	img.Attachments = []orchestrator.Attachment{{Type: orchestrator.AttachmentImage, Content: "data:image/png;base64,AAAA"},
		{Type: orchestrator.AttachmentFile, Content: "ignored: rendered into the content"}}
	a := orchestrator.EstimateRequestTokens(&orchestrator.ModelRequest{Messages: []orchestrator.Message{text}})
	b := orchestrator.EstimateRequestTokens(&orchestrator.ModelRequest{Messages: []orchestrator.Message{img}})
	if b-a != orchestrator.ImageTokens {
		t.Errorf("an image adds %d tokens; want %d", b-a, orchestrator.ImageTokens)
	}
}
