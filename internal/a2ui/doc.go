// Package a2ui checks and renders A2UI v0.9 messages (https://a2ui.org,
// specification/v0_9 of github.com/google/A2UI): the declarative UI a model
// sends with the builtin a2ui tool, and the user actions a client sends
// back.
//
// It is a leaf (the standard library only) shared by the tool
// (adapters/builtin), which validates what the model wrote before the run
// emits it, and by the front-ends: the A2A front-end carries the messages
// as DataParts of the A2UI extension or, to a client that did not activate
// the extension, as the text [Text] renders; it reads the DataParts a
// client sends with [ClientText].
//
//	model --a2ui tool--> Validate --Batch--> a2ui event --> /wunder SSE, console
//	                                                    --> A2A DataPart (activated) or Text (fallback)
//	A2A client DataPart (action) --ClientText--> the run's question
//
// Only the basic catalog is known (its components, their properties and
// the functions they may call): a surface must be created with
// [BasicCatalogID]. The checks are the schema's (message kinds, required
// fields, types, enums, unknown properties) and the protocol's (component
// ids unique in a message, a surface created twice, a root and resolvable
// children for a surface created in the batch, no cycles), within bounds
// on the count of messages and components, the bytes and the nesting
// depth. Every problem found is reported at once, with its JSON path, so a
// model can fix them all in one more call.
package a2ui

import "strings"

// Version is the A2UI version of every message ("version": "v0.9").
const Version = "v0.9"

// ExtensionURI is the A2A extension of A2UI v0.9, as the agent card
// declares it and a client activates it (A2A-Extensions).
const ExtensionURI = "https://a2ui.org/a2a-extension/a2ui/v0.9"

// MIMEType marks an A2A DataPart holding A2UI messages (its metadata's
// mimeType, as the extension specifies).
const MIMEType = "application/json+a2ui"

// MIMETypeAlt is the other spelling clients send, accepted on input.
const MIMETypeAlt = "application/a2ui+json"

// BasicCatalogID is the catalog every surface uses: the only one wunder
// validates and its console renders.
const BasicCatalogID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

// IsMIMEType reports whether mt names A2UI data in either spelling
// (parameters and case aside).
func IsMIMEType(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	mt = strings.TrimSpace(mt)
	return strings.EqualFold(mt, MIMEType) || strings.EqualFold(mt, MIMETypeAlt)
}

// Bounds of one batch (one call of the a2ui tool).
const (
	// MaxMessages bounds the messages of a batch.
	MaxMessages = 64
	// MaxBytes bounds a batch's JSON.
	MaxBytes = 256 << 10
	// MaxDepth bounds the JSON nesting of a batch (the list is level 1).
	MaxDepth = 24
	// MaxComponents bounds the components of a batch, all messages together.
	MaxComponents = 500
	// MaxIDLength bounds a surface or component id, in bytes.
	MaxIDLength = 128
	// MaxTreeDepth bounds a surface's component tree, root included.
	MaxTreeDepth = 32
)
