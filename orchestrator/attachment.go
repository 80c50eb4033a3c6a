package orchestrator

import (
	"fmt"
	"strings"
)

// Attachment types (Attachment.Type), as the original wunder's
// attachments entries spell them.
const (
	// AttachmentText is text the user pasted; Content is the text.
	AttachmentText = "text"
	// AttachmentFile is a document; once a front-end has converted it,
	// Content is its Markdown.
	AttachmentFile = "file"
	// AttachmentImage is a picture; Content is a data URL
	// (data:<mime>;base64,...).
	AttachmentImage = "image"
)

// Attachment is a file that came with a run's question. Front-ends convert
// what they receive (internal/doc2md) before the run starts, so the core
// only ever sees text (Markdown) and images as data URLs; the question's
// stored message keeps them (Message.Attachments).
type Attachment struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type,omitempty"`
	// Content is the text (text, file) or the data URL (image).
	Content string `json:"content"`
	// Size is the size in bytes of what the client sent (decoded).
	Size int64 `json:"size,omitempty"`
}

// maxAttachmentsLen bounds the attachments of one question as the core
// takes them (front-ends apply the configured, smaller limits first).
const maxAttachmentsLen = 64 << 20

func checkAttachments(as []Attachment) error {
	total := 0
	for i, a := range as {
		switch a.Type {
		case AttachmentText, AttachmentFile, AttachmentImage:
		default:
			return invalidf("attachments[%d] (%q): type must be text, file or image, got %q", i, a.Name, a.Type)
		}
		if a.Type == AttachmentImage && !strings.HasPrefix(a.Content, "data:image/") {
			return invalidf("attachments[%d] (%q): an image's content must be a data:image/... URL", i, a.Name)
		}
		total += len(a.Content)
	}
	if total > maxAttachmentsLen {
		return invalidf("attachments are larger than %d bytes", maxAttachmentsLen)
	}
	return nil
}

// withAttachments renders a user message's attachments for a model: text
// and documents go into the content, each between an opening and a closing
// line naming it; images stay as attachments when the model can see them
// (vision), else the content names them as images the model cannot see.
func withAttachments(m Message, vision bool) Message {
	if len(m.Attachments) == 0 {
		return m
	}
	var sb strings.Builder
	sb.WriteString(m.Content)
	var images []Attachment
	for _, a := range m.Attachments {
		sb.WriteString("\n\n")
		label := a.Name
		if a.MimeType != "" {
			label += " (" + a.MimeType + ")"
		}
		switch {
		case a.Type != AttachmentImage:
			fmt.Fprintf(&sb, "[Attachment: %s]\n%s\n[End of attachment: %s]", label, strings.TrimSpace(a.Content), a.Name)
		case vision:
			fmt.Fprintf(&sb, "[Attachment: %s: the image follows]", label)
			images = append(images, a)
		default:
			fmt.Fprintf(&sb, "[Attachment: %s: an image this model cannot see; tell the user if the task needs it]", label)
		}
	}
	m.Content = sb.String()
	m.Attachments = images
	return m
}
