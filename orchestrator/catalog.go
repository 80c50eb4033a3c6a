package orchestrator

import "context"

// Groups of the tool catalog, as the original wunder's GET /wunder/tools
// answered them.
const (
	GroupBuiltin   = "builtin_tools"
	GroupMCP       = "mcp_tools"
	GroupA2A       = "a2a_tools"
	GroupSkills    = "skills"
	GroupKnowledge = "knowledge_tools"
	GroupUser      = "user_tools"
	GroupShared    = "shared_tools"
)

// CatalogGroups lists the groups in the order clients show them.
var CatalogGroups = []string{GroupBuiltin, GroupMCP, GroupA2A, GroupSkills, GroupKnowledge, GroupUser, GroupShared}

// CatalogEntry is one tool of a grouped catalog.
type CatalogEntry struct {
	Name        string   `json:"name"`
	WireName    string   `json:"wire_name"`
	Description string   `json:"description"`
	InputSchema any      `json:"input_schema"`
	Aliases     []string `json:"aliases,omitempty"`
	Source      string   `json:"source"`
	ReadOnly    bool     `json:"read_only,omitempty"`
	// Owner is set on user and shared tools.
	Owner string `json:"owner,omitempty"`
	// App is the namespaced ui:// URI (ui://{server}/…) of the MCP App a
	// configured MCP server's tool names in _meta.ui.resourceUri, which
	// GET /wunder/mcp-apps/resource reads; "" for every other tool.
	App string `json:"app,omitempty"`
}

// appOf is [CatalogEntry.App] of s.
func appOf(s ToolSpec) string {
	server, uri := AppServer(s), AppResourceURI(s.Meta)
	if server == "" || uri == "" {
		return ""
	}
	return AppURI(server, uri)
}

// GroupOf says which catalog group a tool belongs to for userID: a tool of
// the user's own configuration is a user tool, one of another user's a
// shared tool, the rest go by source (lsp tools count as built-ins).
func GroupOf(spec ToolSpec, userID string) string {
	switch {
	case spec.Owner != "" && spec.Owner == userID:
		return GroupUser
	case spec.Owner != "":
		return GroupShared
	}
	switch spec.Source {
	case SourceMCP:
		return GroupMCP
	case SourceA2A:
		return GroupA2A
	case SourceSkill:
		return GroupSkills
	case SourceKnowledge:
		return GroupKnowledge
	}
	return GroupBuiltin
}

// GroupedCatalog returns every tool the user may select for a run (app-only
// tools left out, [ToolSpec.AppOnly]), grouped (every
// group present, possibly empty), each group sorted by name. The REST
// catalog, the A2A card's skills, the MCP aggregated catalog and Connect
// ListTools all draw on [Registry.Catalog], which this groups.
func (r *Registry) GroupedCatalog(ctx context.Context, userID string) (map[string][]CatalogEntry, error) {
	specs, err := r.Catalog(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]CatalogEntry, len(CatalogGroups))
	for _, g := range CatalogGroups {
		out[g] = []CatalogEntry{}
	}
	for _, s := range specs {
		if s.AppOnly {
			continue // an MCP App's own tool: no run may select it
		}
		var schema any = s.InputSchema
		if len(s.InputSchema) == 0 {
			schema = map[string]any{"type": "object"}
		}
		g := GroupOf(s, userID)
		out[g] = append(out[g], CatalogEntry{Name: s.Name, WireName: r.WireName(s.Name), Description: s.Description,
			InputSchema: schema, Aliases: s.Aliases, Source: s.Source, ReadOnly: s.ReadOnly, Owner: s.Owner, App: appOf(s)})
	}
	return out, nil
}
