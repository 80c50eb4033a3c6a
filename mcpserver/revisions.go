package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// /wunder/mcp serves every protocol revision at once. Revision 2026-07-28
// (SEP-2575) has no initialize and no session: each request carries its
// revision in the Mcp-Protocol-Version header and in
// _meta["io.modelcontextprotocol/protocolVersion"], and go-sdk serves it
// only on a stateless StreamableHTTPHandler (a stateful one answers
// -32022). The revisions before it (2025-11-25, 2025-06-18, 2025-03-26,
// 2024-11-05) need the session a stateful handler keeps. go-sdk v1.8.0 has
// no handler that does both, so the endpoint holds one of each over the
// one *mcp.Server, and revisionMux picks per request:
//
//	POST, no Mcp-Session-Id, revision ≥ 2026-07-28  → stateless handler
//	anything else (initialize, a session's requests, GET, DELETE) → stateful
//
// The revision is the header's; a request without the header is read for
// the _meta field (only such requests are: initialize and the malformed),
// so that one naming 2026-07-28 in _meta alone gets the stateless
// handler's -32020 (the header is required) rather than -32022. With
// Options.Stateless the stateful handler is left out: every request is
// served stateless and no session is ever issued.

// revisionSessionless is the first revision served without sessions.
const revisionSessionless = protocolNoServerRequests

// revisionMux sends requests of the sessionless revisions to stateless and
// the rest to stateful.
func (h *Handler) revisionMux(stateful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get(headerSession) == "" && h.sessionless(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// sessionless reports whether a POST without a session id is of a
// sessionless revision: by its header, else by its body's _meta. The body
// read is put back for the handler, which applies the body limit itself.
func (h *Handler) sessionless(r *http.Request) bool {
	if v := r.Header.Get(headerProtocol); v != "" {
		return v >= revisionSessionless
	}
	if r.Body == nil {
		return false
	}
	limit := h.opts.MaxBodyBytes
	if limit <= 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, limit))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || int64(len(head)) >= limit {
		return false // the handler answers the read error or the size
	}
	var msg struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(head, &msg) != nil { // a batch, or not JSON: the handler's to answer
		return false
	}
	var v string
	_ = json.Unmarshal(msg.Params.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v >= revisionSessionless
}

type readCloser struct {
	io.Reader
	io.Closer
}

// listTTL is the ttlMs of /wunder/mcp's lists (SEP-2549): how long a
// client may reuse one. The catalog changes when an admin adds a server or
// a toolset changes; a list a little stale costs a call an unknown-tool
// error at worst.
const listTTL = 30_000

// setCacheable gives every cacheable result of /wunder/mcp (tools/list,
// server/discover) cacheScope private: the catalog is the caller's own
// (a toolset bound to a user shows that user's tools), so no intermediary
// and no other user's client may reuse it; the SDK's default is public.
func setCacheable(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
	c.CacheScope = "private"
	c.TTLMs = listTTL
}
