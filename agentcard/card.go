package agentcard

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/orchestrator"
)

// Catalog lists the tools a user may use; *orchestrator.Orchestrator
// satisfies it.
type Catalog interface {
	Tools(ctx context.Context, userID string) ([]orchestrator.ToolSpec, error)
}

// Provider is the card's provider block.
type Provider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// Options describe the agent. Zero values mean the defaults stated.
type Options struct {
	// Name of the agent. Default "wunder".
	Name string
	// Description. Default: a sentence about wunder.
	Description string
	// Version of the agent (not of the protocol). Default "dev".
	Version  string
	Provider *Provider
	// PublicURL is the external base URL; "" derives it from each request
	// (scheme from TLS / X-Forwarded-Proto, host from Host).
	PublicURL string
	// Path of the JSON-RPC endpoint under the base URL. Default "/a2a".
	Path string
	// RESTPath of the HTTP+JSON binding under the base URL. Default
	// "/a2a/v1".
	RESTPath string
	// GRPC declares the gRPC binding, served on the base URL's host and
	// port (h2c or TLS, as the server is).
	GRPC bool
	// UserID whose tool catalog becomes the public card's skills. Default
	// "a2a".
	UserID string
	// ToolNames, when set, limits the skills to these tools (the ones A2A
	// runs are offered).
	ToolNames []string
	// PushNotifications is advertised in capabilities.
	PushNotifications bool
	// APIKeyRequired adds the security schemes of the gateway's auth
	// (X-API-Key header or Authorization: Bearer) and declares the
	// authenticated extended card: without credentials configured there
	// is nothing to authenticate, so the card does not declare one (and
	// the A2A handler answers -32007).
	APIKeyRequired bool
	// MaxAge of the Cache-Control header, in seconds. Default 300.
	MaxAge int
	// offered are the tools offered to A2A runs when ToolNames no longer
	// says (the extended card lists the whole catalog); nil = ToolNames.
	offered []string
	// Sign, when set, is applied to every card served (the public one and
	// the extended one) and returns it with its signatures; cmd/wunder
	// passes internal/cardsig's Signer.Sign. Default: unsigned.
	Sign func(card []byte) ([]byte, error)
}

// signed applies o.Sign to a card Build returned.
func (o Options) signed(card []byte, err error) ([]byte, error) {
	if err != nil || o.Sign == nil {
		return card, err
	}
	return o.Sign(card)
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "wunder"
	}
	if o.Description == "" {
		o.Description = "wunder, an agent router: answers tasks with an LLM and the tools configured for it"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Path == "" {
		o.Path = "/a2a"
	}
	if o.RESTPath == "" {
		o.RESTPath = "/a2a/v1"
	}
	if o.UserID == "" {
		o.UserID = "a2a"
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 300
	}
	if o.offered == nil {
		o.offered = o.ToolNames
	}
	return o
}

type iface10 struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type iface03 struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

type skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// card10 is the AgentCard of A2A 1.0 (lf.a2a.v1.AgentCard in ProtoJSON):
// nothing of 0.3's shape, so it validates against the 1.0 schema.
//
// It has no securityRequirements: their scopes are a StringList, which
// ProtoJSON (and the 1.0 schema) writes {"list": [...]} and a2a-go v2.4.0
// reads only as a plain list, so no form is read by both. wunder's
// requirement is any one of its schemes with no scope, which a client
// meets by using the schemes the card declares.
type card10 struct {
	Name                string         `json:"name"`
	Description         string         `json:"description"`
	Version             string         `json:"version"`
	Provider            *Provider      `json:"provider,omitempty"`
	SupportedInterfaces []iface10      `json:"supportedInterfaces"`
	Capabilities        capabilities10 `json:"capabilities"`
	DefaultInputModes   []string       `json:"defaultInputModes"`
	DefaultOutputModes  []string       `json:"defaultOutputModes"`
	SecuritySchemes     map[string]any `json:"securitySchemes,omitempty"`
	Skills              []skill        `json:"skills"`
}

type capabilities10 struct {
	Streaming         bool        `json:"streaming"`
	PushNotifications bool        `json:"pushNotifications"`
	ExtendedAgentCard bool        `json:"extendedAgentCard"`
	Extensions        []extension `json:"extensions,omitempty"`
}

// extension is an AgentExtension (the same shape in 1.0 and 0.3).
type extension struct {
	URI         string         `json:"uri"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required"`
	Params      map[string]any `json:"params,omitempty"`
}

// a2uiTool is the builtin tool that makes the card declare the A2UI
// extension: a run offered it can send A2UI surfaces.
const a2uiTool = "a2ui"

// extensionsOf are the extensions a card with these skills declares: A2UI
// v0.9 when the a2ui tool is offered to A2A runs (o.ToolNames, which the
// extended card keeps in o.offered) and a skill, with the server capabilities of the extension's params (the
// basic catalog; no inline catalogs).
func extensionsOf(o Options, skills []skill) []extension {
	if !slices.Contains(o.offered, a2uiTool) || !slices.ContainsFunc(skills, func(s skill) bool { return s.ID == a2uiTool }) {
		return nil
	}
	return []extension{{URI: a2ui.ExtensionURI, Description: "A2UI v0.9: interactive surfaces as DataParts (" + a2ui.MIMEType + "); " +
		"without activation, their text", Params: map[string]any{"supportedCatalogIds": []string{a2ui.BasicCatalogID}, "acceptsInlineCatalogs": false}}}
}

// card03 is the AgentCard of A2A 0.3: the preferred endpoint as url and
// preferredTransport, the others as additionalInterfaces, the schemes in
// OpenAPI's shape with security naming them.
type card03 struct {
	Name                              string                `json:"name"`
	Description                       string                `json:"description"`
	Version                           string                `json:"version"`
	Provider                          *Provider             `json:"provider,omitempty"`
	URL                               string                `json:"url"`
	PreferredTransport                string                `json:"preferredTransport"`
	ProtocolVersion                   string                `json:"protocolVersion"`
	AdditionalInterfaces              []iface03             `json:"additionalInterfaces"`
	SupportsAuthenticatedExtendedCard bool                  `json:"supportsAuthenticatedExtendedCard"`
	Capabilities                      capabilities03        `json:"capabilities"`
	DefaultInputModes                 []string              `json:"defaultInputModes"`
	DefaultOutputModes                []string              `json:"defaultOutputModes"`
	SecuritySchemes                   map[string]any        `json:"securitySchemes,omitempty"`
	Security                          []map[string][]string `json:"security,omitempty"`
	Skills                            []skill               `json:"skills"`
}

type capabilities03 struct {
	Streaming         bool        `json:"streaming"`
	PushNotifications bool        `json:"pushNotifications"`
	Extensions        []extension `json:"extensions,omitempty"`
}

// Unversioned is the card of a client that names no version: the union of
// the 1.0 and 0.3 cards (Build).
const Unversioned a2awire.Version = ""

// Build returns the card JSON of protocol version v (a2awire.V10 or V03)
// for base (scheme://host[/prefix]) with the skills of userID's catalog.
// For Unversioned it is the union of both: the 1.0 card's fields with the
// 0.3 card's beside them (each security scheme in both shapes), which a
// client of either version reads.
func Build(ctx context.Context, cat Catalog, o Options, base string, userID string, v a2awire.Version) ([]byte, error) {
	o = o.withDefaults()
	skills := []skill{{ID: "answer", Name: "answer", Description: "Answers a question or carries out a task, using the tools below as needed", Tags: []string{"general"}}}
	tools, err := cat.Tools(ctx, userID)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if t.AppOnly || len(o.ToolNames) > 0 && !t.AlwaysOn && !slices.Contains(o.ToolNames, t.Name) {
			continue
		}
		skills = append(skills, skill{ID: t.Name, Name: t.Name, Description: firstLine(t.Description), Tags: []string{nonEmpty(t.Source, "tool")}})
	}
	base = strings.TrimSuffix(base, "/")
	if v != Unversioned {
		return json.Marshal(build(o, base, skills, v))
	}
	var cards [2]map[string]any
	for i, v := range []a2awire.Version{a2awire.V03, a2awire.V10} {
		b, err := json.Marshal(build(o, base, skills, v))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &cards[i]); err != nil {
			return nil, err
		}
	}
	union, c10 := cards[0], cards[1]
	schemes, _ := union["securitySchemes"].(map[string]any)
	for k, val := range c10 {
		if k != "securitySchemes" {
			union[k] = val
			continue
		}
		for name, scheme := range val.(map[string]any) {
			if s03, ok := schemes[name].(map[string]any); ok {
				maps.Copy(s03, scheme.(map[string]any))
			}
		}
	}
	return json.Marshal(union)
}

// build is the card of one version (card10 or card03).
func build(o Options, base string, skills []skill, v a2awire.Version) any {
	endpoint := base + o.Path
	inModes, outModes := []string{"text/plain", "application/json"}, []string{"text/plain"}
	if v == a2awire.V03 {
		// 0.3 serves JSON-RPC only: the HTTP+JSON and gRPC bindings are 1.0's.
		c := card03{Name: o.Name, Description: o.Description, Version: o.Version, Provider: o.Provider,
			URL: endpoint, PreferredTransport: "JSONRPC", ProtocolVersion: "0.3.0",
			AdditionalInterfaces:              []iface03{{endpoint, "JSONRPC"}},
			SupportsAuthenticatedExtendedCard: o.APIKeyRequired,
			Capabilities:                      capabilities03{Streaming: true, PushNotifications: o.PushNotifications, Extensions: extensionsOf(o, skills)},
			DefaultInputModes:                 inModes, DefaultOutputModes: outModes, Skills: skills}
		if o.APIKeyRequired {
			c.SecuritySchemes, c.Security = schemes03(), security03()
		}
		return c
	}
	c := card10{Name: o.Name, Description: o.Description, Version: o.Version, Provider: o.Provider,
		SupportedInterfaces: []iface10{{endpoint, "JSONRPC", "1.0"}, {endpoint, "JSONRPC", "0.3"},
			{base + o.RESTPath, "HTTP+JSON", "1.0"}},
		Capabilities:      capabilities10{Streaming: true, PushNotifications: o.PushNotifications, ExtendedAgentCard: o.APIKeyRequired, Extensions: extensionsOf(o, skills)},
		DefaultInputModes: inModes, DefaultOutputModes: outModes, Skills: skills}
	if target, ok := grpcTarget(base); o.GRPC && ok {
		c.SupportedInterfaces = append(c.SupportedInterfaces, iface10{target, "GRPC", "1.0"})
	}
	if o.APIKeyRequired {
		c.SecuritySchemes = schemes10()
	}
	return c
}

// grpcTarget is the gRPC target of the server at base: host:port, no
// scheme and no path; ok is false when base names no host.
func grpcTarget(base string) (target string, ok bool) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", false
	}
	host := u.Host
	switch {
	case u.Port() != "":
	case u.Scheme == "https":
		host += ":443"
	default:
		host += ":80"
	}
	return host, true
}

// schemes10 are the gateway's security schemes in 1.0's oneof shape.
func schemes10() map[string]any {
	return map[string]any{
		"apiKey": map[string]any{"apiKeySecurityScheme": map[string]string{"location": "header", "name": "X-API-Key", "description": apiKeyDesc}},
		"bearer": map[string]any{"httpAuthSecurityScheme": map[string]string{"scheme": "Bearer", "description": bearerDesc}},
	}
}

// schemes03 are the gateway's security schemes in 0.3's (OpenAPI's)
// shape, and security03 the requirement naming them: any one.
func schemes03() map[string]any {
	return map[string]any{
		"apiKey": map[string]string{"type": "apiKey", "in": "header", "name": "X-API-Key", "description": apiKeyDesc},
		"bearer": map[string]string{"type": "http", "scheme": "bearer", "description": bearerDesc},
	}
}

func security03() []map[string][]string { return []map[string][]string{{"apiKey": {}}, {"bearer": {}}} }

// What the gateway's authenticator accepts, as the card tells clients.
const (
	apiKeyDesc = "the admin API key; an admin may act for any user by naming X-Wunder-User"
	bearerDesc = "a wunder user token (wdr_..., from POST /wunder/auth/login or /wunder/auth/tokens), which acts for its user, or the admin API key"
)

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if s == "" {
		return "a tool"
	}
	return s
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
