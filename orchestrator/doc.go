// Package orchestrator is the core of wunder: the agent loop, the run state
// machine, the event log, the session manager (locks, limits, queue), the tool
// registry and its wire naming, the prompt builder, the domain types and the
// sentinel errors, and the interfaces the core consumes ([Model], [Tool],
// [Toolset], [Store], [Workspace]).
//
// It imports no other wunder package, no net/http, no database driver and no
// protocol SDK: front-ends (gateway, a2a, mcpserver, connectapi) call it, and
// adapters (adapters/*, storage) implement its interfaces. deps_test.go at the
// module root enforces this.
package orchestrator
