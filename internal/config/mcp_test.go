package config_test

import (
	"strings"
	"testing"
)

func TestMCPServerAndElicitationKeys(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
mcp:
  elicitation: defaults
  server:
    expose_catalog: true
`}, nil)
	if c.MCP.Elicitation != "defaults" || !c.MCP.Server.ExposeCatalog || !c.MCP.Server.Enabled {
		t.Errorf("mcp = %+v", c.MCP)
	}
	d := mustLoad(t, files{basePath: "mcp: {}\n"}, nil)
	if d.MCP.Elicitation != "decline" || d.MCP.Server.ExposeCatalog {
		t.Errorf("defaults: elicitation %q, expose_catalog %v", d.MCP.Elicitation, d.MCP.Server.ExposeCatalog)
	}
	if got := loadErr(t, "mcp:\n  elicitation: ask\n"); !strings.Contains(got, "mcp.elicitation") {
		t.Errorf("error = %s, want it to name mcp.elicitation", got)
	}
}
