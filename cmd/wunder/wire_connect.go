package main

import (
	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/gateway/connectapi"
)

// mountConnect mounts the wunder.v1 Connect API (Connect, gRPC and gRPC-Web,
// with gRPC health and reflection) on the gateway, behind its middleware.
// serve.go serves h2c on the same port for gRPC clients.
func mountConnect(a *app) {
	var others []string
	if a.cfg.A2A.Server.Enabled {
		others = append(others, a2a.GRPCServiceName) // served by wire_a2a.go
	}
	connectapi.New(a.orch, &connectapi.Options{
		OtherServices: others,
		Scope:         gateway.ScopeOf,
		Ready:         a.ready,
		Logger:        a.log.With("frontend", "connect"),
		Attachments:   a.attach,               // wire_attachments.go
		PublicURL:     a.cfg.Server.PublicURL, // download URIs of file artifacts
	}).MountOn(a.gw)
	// Health answers probes without credentials, as /healthz does.
	a.gw.Open("/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch")
}
