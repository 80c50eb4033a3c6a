// Package a2awire is the A2A wire format shared by wunder's A2A server (the
// a2a front-end) and its A2A client (the a2a@service tools in
// adapters/a2atools): version-neutral types for tasks, messages, parts,
// artifacts and stream events; their JSON shapes in protocol 1.0
// (TASK_STATE_*, ROLE_*, flat parts, StreamResponse wrappers) and 0.3
// (kind discriminators, the final flag); tolerant decoders that read
// either; the JSON-RPC 2.0 envelope; the one table of A2A's errors
// (errors.go: each kind's sentinel, JSON-RPC code, ErrorInfo reason, HTTP
// status and gRPC code, with the encoders and the decoders of every
// binding, errwire.go); and a small client for peer agents.
//
// It lives under internal/ so both a front-end and an adapter may import it
// (adapters may not import front-ends; see deps_test.go). It imports the
// core only for its error sentinels, so that [Client] returns
// orchestrator.ErrNotFound and friends, not a second error vocabulary.
//
//	server: JSON-RPC request --Decode*--> neutral types --Encode(v)--> 1.0 or 0.3 JSON
//	client: neutral types --Encode(peer version)--> peer --Decode*--> neutral types
package a2awire
