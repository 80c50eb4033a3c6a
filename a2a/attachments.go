package a2a

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// attachedQuestion is the question of a message that has files and no
// text.
const attachedQuestion = "Read the attached files."

// incoming is what a message that starts a task brings: its text, its
// files converted as attachments, and the workspace folder its files and
// data parts were saved in ("" = none; files.go).
type incoming struct {
	text string
	atts []orchestrator.Attachment
	dir  string
}

// splitParts reads a message that starts a task for userID: its text
// (its text and data parts, and file parts by URL that are not fetched),
// and its files — inline (a 1.0 {raw} part, a 0.3 {file:{bytes}} part, or
// either with a data: URL) and, with Options.Files fetching URLs, by
// http(s) URL — converted as the attachments of POST /wunder. With
// Options.Files, the files and data parts are saved in userID's workspace
// (files.go). A part that cannot be used is an error naming it: -32005
// for an unsupported type, -32602 otherwise; nothing is saved then.
func (h *Handler) splitParts(ctx context.Context, userID string, parts []w.Part) (*incoming, error) {
	conv := h.converter()
	var rest []w.Part
	var in []orchestrator.Attachment
	var save []savedFile
	var fetched int64
	nfile, ndata := 0, 0
	for _, p := range parts {
		inline := p.Kind == "file" && (p.Raw != nil || strings.HasPrefix(p.URL, "data:"))
		byURL := p.Kind == "file" && !inline && h.files.fetchable(p.URL)
		if !inline && !byURL {
			if p.Kind == "data" && len(p.Data) > 0 && h.files != nil {
				if ndata++; ndata > maxDataParts {
					return nil, errParams("more than %d data parts in one message", maxDataParts)
				}
				save = append(save, savedFile{name: fmt.Sprintf("data-%d.json", ndata), data: p.Data,
					what: fmt.Sprintf("data part %d, JSON", ndata)})
			}
			rest = append(rest, p)
			continue
		}
		nfile++
		name := p.Filename
		if name == "" && byURL {
			if u, err := url.Parse(p.URL); err == nil && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
				name = path.Base(u.Path)
			}
		}
		label := name
		if label == "" {
			label = fmt.Sprintf("attachment %d", nfile)
		}
		mt, raw := p.MediaType, p.Raw
		switch {
		case byURL:
			if nfile > conv.MaxCount() {
				return nil, errParams("file %q: %d files or more, over the limit of %d (attachments.max_count)", label, nfile, conv.MaxCount())
			}
			data, served, err := h.files.fetch(ctx, label, p.URL, conv.MaxBytes())
			if err != nil {
				return nil, err
			}
			if fetched += int64(len(data)); fetched > conv.MaxTotalBytes() {
				return nil, errParams("file %q: the files together are %d bytes or more, over the limit of %d (attachments.max_total_bytes)",
					label, fetched, conv.MaxTotalBytes())
			}
			raw = data
			if mt == "" {
				mt = served
			}
		case raw == nil && h.files != nil:
			// A data: URL, decoded here for the workspace (Prepare
			// decodes it again, bounded the same way).
			urlMime, data, err := conv.DecodeDataURL(label, p.URL)
			if err != nil {
				return nil, convertError(err)
			}
			raw = data
			if mt == "" {
				mt = urlMime
			}
		}
		content := p.URL
		if raw != nil {
			ct := mt
			if ct == "" {
				ct = "application/octet-stream"
			}
			content = "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(raw)
		}
		typ := orchestrator.AttachmentFile
		if strings.HasPrefix(mt, "image/") {
			typ = orchestrator.AttachmentImage
		}
		in = append(in, orchestrator.Attachment{Type: typ, Name: name, MimeType: mt, Content: content})
		if h.files != nil {
			save = append(save, savedFile{name: safeName(name, fileFallback(nfile, mt)), mediaType: mt, data: raw})
		}
	}
	msg := &incoming{text: (&w.Message{Parts: rest}).Text()}
	if len(in) > 0 {
		out, err := conv.Prepare(ctx, in)
		if err != nil {
			return nil, convertError(err)
		}
		msg.atts = out
		if strings.TrimSpace(msg.text) == "" {
			msg.text = attachedQuestion
		}
	}
	if h.files != nil {
		dir, list, err := h.files.save(ctx, userID, save)
		if err != nil {
			return nil, err
		}
		if list != nil {
			msg.dir, msg.atts = dir, append(msg.atts, *list)
		}
	}
	return msg, nil
}

// convertError is a conversion's refusal as an A2A error: -32005 for an
// unsupported type, -32602 for another, ErrUnavailable (the caller may
// retry) when the converter is busy.
func convertError(err error) error {
	var e *doc2md.Error
	if errors.As(err, &e) && e.Kind == doc2md.Unsupported {
		return errKind(w.ErrContentTypeNotSupported, "%s", e.Error())
	}
	if errors.As(err, &e) && e.Kind != doc2md.Busy {
		return errParams("%s", e.Error())
	}
	return err // busy wraps ErrUnavailable: the caller may retry
}

// converter is Options.Attachments, or one with the default limits.
func (h *Handler) converter() *doc2md.Converter {
	if h.opts.Attachments != nil {
		return h.opts.Attachments
	}
	return defaultConverter
}

var defaultConverter = doc2md.New(nil)
