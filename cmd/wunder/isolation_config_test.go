package main

import (
	"maps"
	"testing"
)

// configRows are the isolation matrix's rows of the configuration admin
// API: admin only. The admin's POST names a revision that cannot be
// current, so it is refused with 409 (counted as reaching the resource)
// and changes nothing; anyone else gets 403 before the revision is read.
func (f *fixture) configRows() []matrixRow {
	adminOnly := [4]string{forbidden, forbidden, forbidden, ok}
	row := func(resource, action, method, path, body string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: action, want: adminOnly,
			try: func(t *testing.T, c caller) string {
				hdr := maps.Clone(c.hdr)
				if hdr == nil {
					hdr = map[string]string{}
				}
				if method == "POST" {
					hdr["If-Match"] = "999999"
				}
				return restOutcome(f.rest(t, method, path, body, hdr))
			}}
	}
	var rows []matrixRow
	for _, sec := range []struct{ name, body string }{
		{"llm", `{"llm":{}}`}, {"mcp", `{"servers":[]}`}, {"a2a", `{"services":[]}`},
	} {
		rows = append(rows,
			row("configuration: "+sec.name, "get", "GET", "/wunder/admin/"+sec.name, ""),
			row("configuration: "+sec.name, "change", "POST", "/wunder/admin/"+sec.name, sec.body))
	}
	return rows
}
