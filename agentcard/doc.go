// Package agentcard builds wunder's A2A AgentCard and serves it at
// /.well-known/agent-card.json.
//
// The card is the union of the 1.0 and 0.3 shapes (NOTES.md): 1.0 clients
// read supportedInterfaces (the one /a2a endpoint, listed for 1.0 and for
// 0.3), 0.3 clients read url, preferredTransport, protocolVersion and
// additionalInterfaces; security schemes carry both the 1.0 oneof keys and
// the 0.3 type fields. Skills are built from the tool catalog of the A2A
// user. The card is pre-marshalled per base URL and refreshed every
// minute, served with Cache-Control, an ETag (If-None-Match answers 304)
// and CORS for any origin: it is public by design, so cmd/wunder serves it
// in front of the gateway's API-key check. With Options.Sign (cmd/wunder
// passes internal/cardsig's signer) every card served, the extended one
// too, carries its signatures.
//
//	h := agentcard.New(orch, &agentcard.Options{Name: "wunder", APIKeyRequired: true})
//	mux.Handle(agentcard.Path, h)
package agentcard
