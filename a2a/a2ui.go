package a2a

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/orchestrator"
)

// A2UI over A2A (the A2UI v0.9 extension,
// https://a2ui.org/a2a-extension/a2ui/v0.9): each A2UI batch a run sends
// (orchestrator/a2ui.go) is an artifact of its task. A call that
// activates the extension (its URI in the A2A-Extensions header, or 0.3's
// X-A2A-Extensions; gRPC metadata a2a-extensions) gets it as DataParts
// with the metadata mimeType application/json+a2ui, and the response
// names the extension in its A2A-Extensions header: in 1.0 one DataPart
// whose data is the list of messages, as the extension specifies; in 0.3,
// whose DataPart holds an object, one DataPart per message (the
// protocol's A2A binding: a message per part). A call that does not gets
// the batch's text (a2ui.Batch.Text). A push notification has no request
// to activate anything in: it carries the text.
//
// A message's DataParts marked application/json+a2ui or
// application/a2ui+json (metadata mimeType or mediaType, or the part's
// own media type) are the user's actions on a surface: they reach the
// model as text, "[a2ui action] {...}" (a2ui.ClientText), whether the call
// activated the extension or not.

// ExtensionsHeader names the extensions a request activates and a
// response applied (A2A 1.0); 0.3 spelled it with an X- prefix.
const ExtensionsHeader = "A2A-Extensions"

const extensionsHeader03 = "X-" + ExtensionsHeader

// view is how a call sees a task's A2UI batches.
type view struct {
	// a2ui: the call activated the A2UI extension.
	a2ui bool
	v    w.Version
}

// view is c's view.
func (c *call) view() view { return view{a2ui: c.a2ui, v: c.v} }

// activates reports whether r activates the A2UI extension.
func activates(r *http.Request) bool {
	if r == nil {
		return false
	}
	for _, name := range []string{ExtensionsHeader, extensionsHeader03} {
		for _, v := range r.Header.Values(name) {
			for _, uri := range strings.Split(v, ",") {
				if strings.TrimSpace(uri) == a2ui.ExtensionURI {
					return true
				}
			}
		}
	}
	return false
}

// activate marks c as a call that activated the A2UI extension when its
// request says so, and names the extension in the response's header (in
// the spelling the request used).
func activate(c *call, hdr http.Header) {
	if c.a2ui = activates(c.r); !c.a2ui || hdr == nil {
		return
	}
	hdr.Set(ExtensionsHeader, a2ui.ExtensionURI)
	if c.r.Header.Get(extensionsHeader03) != "" {
		hdr.Set(extensionsHeader03, a2ui.ExtensionURI)
	}
}

// a2uiArtifact is a batch as an artifact of the task, in vw's shape.
func a2uiArtifact(ud orchestrator.A2UIData, vw view) w.Artifact {
	a := w.Artifact{ArtifactID: ud.ID, Name: "a2ui", Description: "A2UI surface " + strings.Join(ud.Surfaces, ", ")}
	if !vw.a2ui {
		a.Parts = []w.Part{w.TextPart(ud.Text)}
		return a
	}
	a.Extensions = []string{a2ui.ExtensionURI}
	part := func(data json.RawMessage) w.Part {
		return w.Part{Kind: "data", Data: data, MediaType: a2ui.MIMEType, Metadata: map[string]any{"mimeType": a2ui.MIMEType}}
	}
	if vw.v != w.V03 {
		a.Parts = []w.Part{part(ud.Messages)}
		return a
	}
	var msgs []json.RawMessage
	if json.Unmarshal(ud.Messages, &msgs) != nil {
		a.Parts = []w.Part{w.TextPart(ud.Text)}
		return a
	}
	for _, m := range msgs {
		a.Parts = append(a.Parts, part(m))
	}
	return a
}

// isA2UIPart reports whether p is a DataPart of A2UI messages.
func isA2UIPart(p w.Part) bool {
	if p.Data == nil {
		return false
	}
	if a2ui.IsMIMEType(p.MediaType) {
		return true
	}
	for _, k := range []string{"mimeType", "mediaType", "mime_type", "media_type"} {
		if s, ok := p.Metadata[k].(string); ok && a2ui.IsMIMEType(s) {
			return true
		}
	}
	return false
}

// readA2UI turns a message's A2UI DataParts into the text parts the model
// reads; one that is not valid A2UI is an invalid-params error saying why.
func readA2UI(m *w.Message) error {
	if !slices.ContainsFunc(m.Parts, isA2UIPart) {
		return nil
	}
	parts := make([]w.Part, len(m.Parts))
	for i, p := range m.Parts {
		if !isA2UIPart(p) {
			parts[i] = p
			continue
		}
		text, err := a2ui.ClientText(p.Data)
		if err != nil {
			return errParams("parts[%d]: %v", i, err)
		}
		parts[i] = w.TextPart(text)
	}
	m.Parts = parts
	return nil
}
