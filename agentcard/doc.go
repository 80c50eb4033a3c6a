// Package agentcard builds wunder's A2A AgentCard and serves it at
// /.well-known/agent-card.json.
//
// The card answers the version a client asks for (A2A-Version header or
// query parameter): 1.0's, an lf.a2a.v1.AgentCard in ProtoJSON that
// validates against the 1.0 schema (supportedInterfaces lists the one /a2a
// endpoint for 1.0 and 0.3, HTTP+JSON and gRPC); 0.3's for 0.3 (url,
// preferredTransport, protocolVersion, additionalInterfaces, security);
// the union of both for a client that names no version (0.3 clients and
// the 1.0 SDKs' resolvers send none; see cardVersion).
// Skills are built from the tool catalog of the A2A user. Each version's
// card is pre-marshalled per base URL and refreshed every minute, served
// with Cache-Control, its own ETag (If-None-Match answers 304), Vary:
// A2A-Version and CORS for any origin: it is public by design, so
// cmd/wunder serves it in front of the gateway's API-key check. With
// Options.Sign (cmd/wunder passes internal/cardsig's signer) every card
// served, each version's and the extended one, carries its signatures.
//
//	h := agentcard.New(orch, &agentcard.Options{Name: "wunder", APIKeyRequired: true})
//	mux.Handle(agentcard.Path, h)
package agentcard
