package agentcard_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdkcard "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/orchestrator"
)

// The card declares the A2UI v0.9 extension, with the basic catalog in
// its params, when the a2ui tool is offered to A2A runs, in both
// versions; not when the tools offered over A2A leave it out (or name
// none: then the card lists every tool, but runs are offered none).
func TestCardDeclaresA2UI(t *testing.T) {
	withUI := append(slices.Clone(tools), orchestrator.ToolSpec{Name: "a2ui", Description: "Show a UI", Source: "builtin"})
	for _, v := range []a2awire.Version{a2awire.V10, a2awire.V03} {
		b, err := agentcard.Build(t.Context(), withUI, agentcard.Options{ToolNames: []string{"a2ui"}}, "https://agents.example", "a2a", v)
		if err != nil {
			t.Fatal(err)
		}
		var card struct {
			Capabilities struct {
				Extensions []struct {
					URI      string `json:"uri"`
					Required bool   `json:"required"`
					Params   struct {
						SupportedCatalogIDs []string `json:"supportedCatalogIds"`
					} `json:"params"`
				} `json:"extensions"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(b, &card); err != nil {
			t.Fatal(err)
		}
		ext := card.Capabilities.Extensions
		if len(ext) != 1 || ext[0].URI != a2ui.ExtensionURI || ext[0].Required || !slices.Equal(ext[0].Params.SupportedCatalogIDs, []string{a2ui.BasicCatalogID}) {
			t.Fatalf("%s card: extensions %+v", v, ext)
		}
		for _, names := range [][]string{{"read_file"}, nil} {
			without, err := agentcard.Build(t.Context(), withUI, agentcard.Options{ToolNames: names}, "https://agents.example", "a2a", v)
			if err != nil {
				t.Fatal(err)
			}
			var plain struct {
				Capabilities map[string]any `json:"capabilities"`
			}
			if err := json.Unmarshal(without, &plain); err != nil || plain.Capabilities["extensions"] != nil {
				t.Fatalf("%s card offering %v declares %v", v, names, plain.Capabilities)
			}
		}
	}
	// The extended card lists the whole catalog and still declares it.
	ext, err := agentcard.New(withUI, &agentcard.Options{ToolNames: []string{"a2ui"}}).Extended(httptest.NewRequest("GET", "/", nil), "a2a", a2awire.V10)
	if err != nil || !strings.Contains(string(ext), a2ui.ExtensionURI) || !strings.Contains(string(ext), `"id":"read_file"`) {
		t.Fatalf("the extended card: %v %s", err, ext)
	}
	// a2a-go reads it.
	srv := serveCatalog(t, withUI, &agentcard.Options{ToolNames: []string{"a2ui"}})
	card, err := sdkcard.DefaultResolver.Resolve(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Capabilities.Extensions) != 1 || card.Capabilities.Extensions[0].URI != a2ui.ExtensionURI {
		t.Fatalf("a2a-go reads extensions %+v", card.Capabilities.Extensions)
	}
}
