package mcpserver

// Test hooks.

// SetToolsPageSize makes pages of tools/list hold n tools; call it before
// h serves.
func SetToolsPageSize(h *Handler, n int) { h.toolsPageSize = n }

// ListenStreams is how many subscriptions/listen streams user has open on h.
func ListenStreams(h *Handler, user string) int {
	if h.listens == nil {
		return 0
	}
	return h.listens.streams(user)
}
