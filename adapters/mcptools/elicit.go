package mcptools

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation policies (Options.Elicitation). A server's elicitation/create
// asks a human; inside a run there is none, so the policy answers for them.
const (
	// ElicitDecline advertises no elicitation capability, so servers do not
	// ask; should one ask anyway, the SDK refuses the request. The default.
	ElicitDecline = "decline"
	// ElicitDefaults advertises form elicitation and accepts each request
	// with the defaults of its schema, when every required field has one;
	// otherwise it declines. URL-mode requests are declined.
	ElicitDefaults = "defaults"
)

// elicitWithDefaults answers a form elicitation with its schema's defaults.
func elicitWithDefaults(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Params == nil || (req.Params.Mode != "" && req.Params.Mode != "form") {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	content, ok := schemaDefaults(req.Params.RequestedSchema)
	if !ok {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// schemaDefaults returns the default of every property of a flat object
// schema; ok is false when a required property has none.
func schemaDefaults(schema any) (map[string]any, bool) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, false
	}
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, false
	}
	out := map[string]any{}
	for name, p := range s.Properties {
		if p.Default != nil {
			out[name] = p.Default
		}
	}
	for _, r := range s.Required {
		if _, ok := out[r]; !ok {
			return nil, false
		}
	}
	return out, true
}
