package builtin

import (
	"context"
	"path/filepath"
)

// Diagnostics is the optional hook of write_file, replace_text and
// edit_file (Options.Diagnostics): After returns a short summary of what a
// language server says about the file just written at absPath (resolved,
// inside userID's workspace), or "" when nothing handles it. It must return
// at once for files no server handles. adapters/lsptools implements it.
type Diagnostics interface {
	After(ctx context.Context, userID, absPath string) (summary string)
}

// diagnose appends the hook's summary of abs to content, if there is one.
func (c *call) diagnose(ctx context.Context, content, abs string) string {
	d := c.set.opts.Diagnostics
	if d == nil {
		return content
	}
	user := c.inv.UserID
	if user == "" {
		user = filepath.Base(c.ws.dir)
	}
	if s := d.After(ctx, user, abs); s != "" {
		return content + "\n" + s
	}
	return content
}
