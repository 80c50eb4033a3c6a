package a2a

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// attachedQuestion is the question of a message that has files and no
// text.
const attachedQuestion = "Read the attached files."

// splitParts returns a message's text (its text and data parts, and file
// parts by URL, as before) and its inline files (a 1.0 {raw} part, a 0.3
// {file:{bytes}} part, or either with a data: URL), converted as the
// attachments of POST /wunder. A file that cannot be used is an error
// naming it: -32005 for an unsupported type, -32602 otherwise.
func (h *Handler) splitParts(ctx context.Context, parts []w.Part) (string, []orchestrator.Attachment, error) {
	var rest []w.Part
	var in []orchestrator.Attachment
	for _, p := range parts {
		inline := p.Kind == "file" && (p.Raw != nil || strings.HasPrefix(p.URL, "data:"))
		if !inline {
			rest = append(rest, p)
			continue
		}
		content := p.URL
		if p.Raw != nil {
			mt := p.MediaType
			if mt == "" {
				mt = "application/octet-stream"
			}
			content = "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Raw)
		}
		typ := orchestrator.AttachmentFile
		if strings.HasPrefix(p.MediaType, "image/") {
			typ = orchestrator.AttachmentImage
		}
		in = append(in, orchestrator.Attachment{Type: typ, Name: p.Filename, MimeType: p.MediaType, Content: content})
	}
	text := (&w.Message{Parts: rest}).Text()
	if len(in) == 0 {
		return text, nil, nil
	}
	conv := h.opts.Attachments
	if conv == nil {
		conv = defaultConverter
	}
	out, err := conv.Prepare(ctx, in)
	if err != nil {
		var e *doc2md.Error
		if errors.As(err, &e) && e.Kind == doc2md.Unsupported {
			return "", nil, errKind(w.ErrContentTypeNotSupported, "%s", e.Error())
		}
		if errors.As(err, &e) && e.Kind != doc2md.Busy {
			return "", nil, errParams("%s", e.Error())
		}
		return "", nil, err // busy wraps ErrUnavailable: the caller may retry
	}
	if strings.TrimSpace(text) == "" {
		text = attachedQuestion
	}
	return text, out, nil
}

var defaultConverter = doc2md.New(nil)
