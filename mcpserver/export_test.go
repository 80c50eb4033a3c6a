package mcpserver

// Test hooks.

// SetToolsPageSize makes pages of tools/list hold n tools; call it before
// h serves.
func SetToolsPageSize(h *Handler, n int) { h.toolsPageSize = n }
