package storage

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// The MCP tool-spec cache on both backends.
func TestMCPToolSpecs(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.fresh(t))
			ctx := t.Context()
			if _, _, err := st.LoadMCPToolSpecs(ctx, "fs"); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Fatalf("load before save: %v, want ErrNotFound", err)
			}
			for _, tools := range []string{`[{"name":"a"}]`, `[{"name":"a"},{"name":"b"}]`} {
				if err := st.SaveMCPToolSpecs(ctx, "fs", json.RawMessage(tools)); err != nil {
					t.Fatal(err)
				}
				got, at, err := st.LoadMCPToolSpecs(ctx, "fs")
				if err != nil || string(got) != tools || at.IsZero() {
					t.Fatalf("load: %s %v %v, want %s", got, at, err, tools)
				}
			}
		})
	}
}
