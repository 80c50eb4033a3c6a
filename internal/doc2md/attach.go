package doc2md

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// Prepare checks and converts the attachments of a request, as clients
// send them ({type, name, content, mime_type}: content is text for type
// text and a data URL for file and image), into what the core takes: text
// and Markdown, images as data URLs of their sniffed type. The first
// attachment that cannot be used is an *Error naming it. A file that turns
// out to be a picture is an image; an image that is not a picture is
// refused.
func (c *Converter) Prepare(ctx context.Context, in []orchestrator.Attachment) ([]orchestrator.Attachment, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > c.opts.MaxCount {
		return nil, overLimit(in[c.opts.MaxCount].Name, TooLarge, "attachments.max_count", int64(c.opts.MaxCount), "%d attachments", len(in))
	}
	out := make([]orchestrator.Attachment, 0, len(in))
	var total int64
	for i, a := range in {
		name := a.Name
		if strings.TrimSpace(name) == "" {
			name = fmt.Sprintf("attachment %d", i+1)
		}
		p, size, err := c.prepareOne(ctx, name, a)
		if err != nil {
			return nil, err
		}
		if total += size; total > c.opts.MaxTotalBytes {
			return nil, overLimit(name, TooLarge, "attachments.max_total_bytes", c.opts.MaxTotalBytes, "the attachments together are %d bytes or more", total)
		}
		out = append(out, p)
	}
	return out, nil
}

func (c *Converter) prepareOne(ctx context.Context, name string, a orchestrator.Attachment) (orchestrator.Attachment, int64, error) {
	if a.Type == orchestrator.AttachmentText {
		if int64(len(a.Content)) > c.opts.MaxBytes {
			return a, 0, overLimit(name, TooLarge, "attachments.max_bytes", c.opts.MaxBytes, "%d bytes", len(a.Content))
		}
		mt := a.MimeType
		if mt == "" {
			mt = "text/plain"
		}
		return orchestrator.Attachment{Type: a.Type, Name: name, MimeType: mt, Content: c.clip(orchestrator.StoredText(a.Content)),
			Size: int64(len(a.Content))}, int64(len(a.Content)), nil
	}
	if a.Type != orchestrator.AttachmentFile && a.Type != orchestrator.AttachmentImage {
		return a, 0, errorf(name, Unreadable, "type must be text, file or image, got %q", a.Type)
	}
	urlMime, data, err := c.DecodeDataURL(name, a.Content)
	if err != nil {
		return a, 0, err
	}
	hint := a.MimeType
	if hint == "" {
		hint = urlMime
	}
	format, mt, err := sniff(name, hint, data)
	if err != nil {
		return a, 0, err
	}
	size := int64(len(data))
	if format == fmtImage {
		return orchestrator.Attachment{Type: orchestrator.AttachmentImage, Name: name, MimeType: mt,
			Content: "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(data), Size: size}, size, nil
	}
	if a.Type == orchestrator.AttachmentImage {
		if mt == "" {
			mt = "a ZIP archive"
		}
		return a, 0, errorf(name, Unsupported, "type image, but the content is %s, not a PNG, JPEG, GIF or WebP picture", mt)
	}
	md, mt, err := c.convert(ctx, name, format, mt, data, true)
	if err != nil {
		return a, 0, err
	}
	return orchestrator.Attachment{Type: orchestrator.AttachmentFile, Name: name, MimeType: mt, Content: md, Size: size}, size, nil
}

// DecodeDataURL decodes a data URL (data:<mime>;base64,<data>; without
// ;base64 the data is percent-encoded text) of at most MaxBytes.
func (c *Converter) DecodeDataURL(name, s string) (mimeType string, data []byte, err error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "data:")
	if !ok {
		return "", nil, errorf(name, Unreadable, "content must be a data URL (data:<mime>;base64,...)")
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, errorf(name, Unreadable, "a data URL without a comma before its data")
	}
	params := strings.Split(meta, ";")
	mimeType = params[0]
	b64 := len(params) > 1 && strings.EqualFold(params[len(params)-1], "base64")
	// A decoded size over the limit is known before decoding.
	if est := int64(len(payload)); (b64 && est/4*3 > c.opts.MaxBytes+3) || (!b64 && est > 3*c.opts.MaxBytes) {
		return "", nil, overLimit(name, TooLarge, "attachments.max_bytes", c.opts.MaxBytes, "about %d bytes", est/4*3)
	}
	if b64 {
		payload = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, payload)
		enc := base64.StdEncoding
		if !strings.HasSuffix(payload, "=") && len(payload)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		data, err = enc.DecodeString(payload)
		if err != nil {
			if data, err = base64.URLEncoding.DecodeString(payload); err != nil {
				return "", nil, errorf(name, Unreadable, "the data URL's base64 is malformed")
			}
		}
	} else {
		text, err := url.PathUnescape(payload)
		if err != nil {
			return "", nil, errorf(name, Unreadable, "the data URL's text is malformed: %v", err)
		}
		data = []byte(text)
	}
	if int64(len(data)) > c.opts.MaxBytes {
		return "", nil, overLimit(name, TooLarge, "attachments.max_bytes", c.opts.MaxBytes, "%d bytes", len(data))
	}
	return mimeType, data, nil
}
