package agentcard

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"strings"

	"github.com/wunder/wunder/internal/a2awire"
)

// PeerCard rewrites the card of a peer agent published behind wunder at
// {Path}/{peer} (the A2A pass-through, a2a.PassThroughOptions.Card) for
// the client of r. The card keeps what it says of the agent (name,
// description, skills, modes, provider, version, extensions) and its
// shape (1.0, 0.3, or both side by side), and says how to reach it
// through wunder:
//
//   - interfaces: the peer's JSON-RPC ones (1.0 and 0.3) at
//     {base}{Path}/{peer}, its HTTP+JSON 1.0 one at {base}{Path}/{peer}/v1,
//     without the peer's tenant (a tenant through wunder names a wunder
//     user); with Options.GRPC and a JSON-RPC 1.0 interface of the peer's
//     (through which wunder forwards gRPC), gRPC 1.0 at wunder's gRPC
//     target with the tenant "peers/{peer}" (a2awire.PeerTenantPrefix), in
//     the place of the peer's own gRPC interface or last; its others (0.3's
//     HTTP+JSON and gRPC) are left out, since wunder does not forward them.
//     The same for 0.3's url, preferredTransport and additionalInterfaces;
//   - no push notifications and no extended card: the pass-through
//     forwards neither;
//   - wunder's security schemes in place of the peer's (wunder holds the
//     peer's credentials), or none when wunder asks for no credentials;
//   - the peer's signatures removed and, with Options.Sign, wunder's.
func (h *Handler) PeerCard(r *http.Request, peer string, raw json.RawMessage) (json.RawMessage, error) {
	base := h.BaseURL(r)
	endpoint := base + h.opts.Path + "/" + url.PathEscape(peer)
	at := peerURLs{jsonrpc: endpoint, rest: endpoint + "/v1"}
	if target, ok := grpcTarget(base); h.opts.GRPC && ok {
		at.grpc, at.tenant = target, a2awire.PeerTenantPrefix+peer
	}
	return h.opts.signed(rewritePeer(raw, at, h.opts.APIKeyRequired))
}

// peerURLs are where a published peer is reached through wunder.
type peerURLs struct {
	jsonrpc, rest string
	// grpc is wunder's gRPC target ("": wunder serves no gRPC), and
	// tenant the peer's tenant there.
	grpc, tenant string
}

// rewritePeer is PeerCard's rewriting.
func rewritePeer(raw []byte, at peerURLs, credentials bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers as the peer wrote them
	var card map[string]any
	if err := dec.Decode(&card); err != nil || card == nil {
		return nil, errors.New("the card is not a JSON object")
	}
	delete(card, "signatures")
	_, is10 := card["supportedInterfaces"]
	_, is03 := card["url"]
	if is10 {
		card["supportedInterfaces"] = interfaces10(card["supportedInterfaces"], at)
	}
	if is03 {
		rewrite03(card, at.jsonrpc)
	}
	if caps, ok := card["capabilities"].(map[string]any); ok {
		for _, k := range []string{"pushNotifications", "extendedAgentCard"} {
			if _, set := caps[k]; set {
				caps[k] = false
			}
		}
	}
	if _, set := card["supportsAuthenticatedExtendedCard"]; set {
		card["supportsAuthenticatedExtendedCard"] = false
	}
	for _, k := range []string{"securitySchemes", "security", "securityRequirements"} {
		delete(card, k)
	}
	if credentials {
		switch {
		case is10 && is03:
			schemes := schemes03()
			for name, s := range schemes10() {
				both := map[string]any{}
				for k, v := range schemes[name].(map[string]string) {
					both[k] = v
				}
				maps.Copy(both, s.(map[string]any))
				schemes[name] = both
			}
			card["securitySchemes"], card["security"] = schemes, security03()
		case is03:
			card["securitySchemes"], card["security"] = schemes03(), security03()
		default:
			card["securitySchemes"] = schemes10()
		}
	}
	return json.Marshal(card)
}

// interfaces10 rewrites 1.0's supportedInterfaces: each binding wunder
// forwards once, at wunder's URL, in the peer's order; gRPC (forwarded
// through the peer's JSON-RPC 1.0 interface) where the peer lists its
// own, else last.
func interfaces10(v any, at peerURLs) []any {
	list, _ := v.([]any)
	grpc := false
	if at.grpc != "" {
		for _, it := range list {
			m, _ := it.(map[string]any)
			binding, _ := m["protocolBinding"].(string)
			ver, _ := m["protocolVersion"].(string)
			if pv, ok := a2awire.ParseVersion(ver); ok && ver != "" && pv == a2awire.V10 && strings.EqualFold(binding, "JSONRPC") {
				grpc = true
			}
		}
	}
	out := []any{}
	seen := map[string]bool{}
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		binding, _ := m["protocolBinding"].(string)
		ver, _ := m["protocolVersion"].(string)
		pv, known := a2awire.ParseVersion(ver)
		var u, tenant string
		switch {
		case !known || ver == "":
			continue
		case strings.EqualFold(binding, "JSONRPC"):
			u = at.jsonrpc
		case strings.EqualFold(binding, "HTTP+JSON") && pv == a2awire.V10:
			u = at.rest
		case strings.EqualFold(binding, "GRPC") && pv == a2awire.V10 && grpc:
			u, tenant = at.grpc, at.tenant
		default:
			continue
		}
		key := strings.ToUpper(binding) + " " + string(pv)
		if seen[key] {
			continue
		}
		seen[key] = true
		m = maps.Clone(m)
		m["url"] = u
		delete(m, "tenant")
		if tenant != "" {
			m["tenant"] = tenant
		}
		out = append(out, m)
	}
	if grpc && !seen["GRPC "+string(a2awire.V10)] {
		out = append(out, map[string]any{"url": at.grpc, "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": at.tenant})
	}
	return out
}

// rewrite03 rewrites 0.3's url, preferredTransport and
// additionalInterfaces: JSON-RPC at endpoint when the peer offers it over
// 0.3, else none of the three (wunder forwards no other 0.3 binding).
func rewrite03(card map[string]any, endpoint string) {
	pref, _ := card["preferredTransport"].(string)
	jsonrpc := pref == "" || strings.EqualFold(pref, "JSONRPC")
	extra, listed := card["additionalInterfaces"].([]any)
	for _, it := range extra {
		if m, ok := it.(map[string]any); ok {
			if t, _ := m["transport"].(string); strings.EqualFold(t, "JSONRPC") {
				jsonrpc = true
			}
		}
	}
	if !jsonrpc {
		delete(card, "url")
		delete(card, "preferredTransport")
		delete(card, "additionalInterfaces")
		return
	}
	card["url"] = endpoint
	card["preferredTransport"] = "JSONRPC"
	if listed {
		card["additionalInterfaces"] = []any{map[string]any{"url": endpoint, "transport": "JSONRPC"}}
	}
}
