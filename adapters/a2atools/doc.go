// Package a2atools offers peer A2A agents to the model as tools: each
// configured service is the tool a2a@<name>, plus the built-ins
// a2a_observe and a2a_wait for delegating to several peers in parallel.
//
// A call resolves (and caches) the peer's AgentCard, speaks 1.0 to 1.0
// peers and 0.3 to 0.3 peers (the first JSON-RPC interface of the card),
// streams the task when the peer can (resubscribing once if the stream is
// cut before the task ends), and returns the peer's answer and artifacts
// as the tool result. It emits a2a_request, a2a_status and a2a_result into
// the calling run's event log through ToolInvocation.Emit. When the run is
// cancelled, the remote task is cancelled too.
//
// Signed cards: a service with a [CardCheck] has its card verified
// (internal/cardsig) against trusted keys or a JWKS, read through the SSRF
// guard (internal/netguard), before the card is used; a refused card is an
// error result that says why, no message reaches the peer, and the card is
// read again at the next call.
//
// Recursion guard: the delegation depth travels in message metadata
// (internal/a2awire.DepthKey); wunder's A2A front-end hands it to the run
// it starts, whose a2a@ tools refuse to go deeper than max_depth with an
// error result the model can read.
//
// Goroutines: a call with background:true runs its task on a goroutine
// owned by the Set (WaitGroup, cancelled by Close); a2a_wait collects it.
package a2atools
