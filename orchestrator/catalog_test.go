package orchestrator_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// ownedToolset yields, for each user, their own tool and alice's shared
// one (to everyone but alice), as adapters/usertools does.
type ownedToolset struct{}

func (ownedToolset) Name() string { return "owned" }

func (ownedToolset) Tools(_ context.Context, userID string) ([]orchestrator.Tool, error) {
	own := orchestratortest.NewTool(userID+"@notes", true, nil)
	own.S.Owner, own.S.Source = userID, orchestrator.SourceMCP
	out := []orchestrator.Tool{own}
	if userID != "alice" {
		shared := orchestratortest.NewTool("alice@kb", true, nil)
		shared.S.Owner, shared.S.Source = "alice", orchestrator.SourceKnowledge
		out = append(out, shared)
	}
	return out, nil
}

func TestGroupedCatalog(t *testing.T) {
	tool := func(name, source string) orchestrator.Tool {
		tl := orchestratortest.NewTool(name, true, nil)
		tl.S.Source = source
		return tl
	}
	reg := orchestrator.NewRegistry("", nil,
		orchestrator.StaticToolset{SetName: "s", List: []orchestrator.Tool{
			tool("read_file", orchestrator.SourceBuiltin), tool("lsp", orchestrator.SourceLSP),
			tool("fs@list", orchestrator.SourceMCP), tool("a2a@peer", orchestrator.SourceA2A),
			tool("review", orchestrator.SourceSkill), tool("docs", orchestrator.SourceKnowledge),
		}},
		ownedToolset{})
	names := func(es []orchestrator.CatalogEntry) (out []string) {
		for _, e := range es {
			out = append(out, e.Name+"/"+e.WireName+"/"+e.Owner)
		}
		return out
	}
	want := map[string][]string{
		orchestrator.GroupBuiltin:   {"ask_user/ask_user/", "final_response/final_response/", "lsp/lsp/", "plan/plan/", "read_file/read_file/", "reply/reply/"},
		orchestrator.GroupMCP:       {"fs@list/fs__list/"},
		orchestrator.GroupA2A:       {"a2a@peer/a2a__peer/"},
		orchestrator.GroupSkills:    {"review/review/"},
		orchestrator.GroupKnowledge: {"docs/docs/"},
		orchestrator.GroupUser:      {"bob@notes/bob__notes/bob"},
		orchestrator.GroupShared:    {"alice@kb/alice__kb/alice"},
	}
	got, err := reg.GroupedCatalog(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(orchestrator.CatalogGroups) {
		t.Errorf("groups = %d; want all %d, empty ones too", len(got), len(orchestrator.CatalogGroups))
	}
	for g, w := range want {
		if h := names(got[g]); !slices.Equal(h, w) {
			t.Errorf("bob's %s = %v; want %v", g, h, w)
		}
	}
	got, _ = reg.GroupedCatalog(t.Context(), "alice")
	if h := names(got[orchestrator.GroupUser]); !slices.Equal(h, []string{"alice@notes/alice__notes/alice"}) {
		t.Errorf("alice's user_tools = %v; want her own tool", h)
	}
	if h := got[orchestrator.GroupShared]; len(h) != 0 {
		t.Errorf("alice's shared_tools = %v; want none (her own shared tool is hers)", names(h))
	}
}
