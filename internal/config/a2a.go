package config

import (
	"path"
	"strings"
	"time"

	"github.com/wunder/wunder/internal/cardsig"
)

// A2A configures both directions of A2A: wunder's own agent (server, push)
// and the peer agents runs may delegate to (services).
type A2A struct {
	// TimeoutSeconds (timeout_s) bounds one a2a@service call unless the
	// service sets its own. Default 120.
	TimeoutSeconds int `yaml:"timeout_s"`
	// Services are the peer agents; each is the tool a2a@<name>. Default [].
	Services []A2AService `yaml:"services"`
	// Server configures /a2a and the agent card.
	Server A2AServer `yaml:"server"`
	// Push configures push notifications of /a2a tasks.
	Push A2APush `yaml:"push"`
}

// A2AReservedName reports whether a peer name would take a path segment
// of A2A's bindings under /a2a/: "v" and digits ("v1" holds the HTTP+JSON
// binding, later versions will take the others). A peer published at
// /a2a/{peer} so named would shadow a binding; a test in cmd/wunder keeps
// this rule and the a2a package's routes in step.
func A2AReservedName(name string) bool {
	digits, ok := strings.CutPrefix(strings.ToLower(name), "v")
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// Timeout is timeout_s as a duration.
func (a A2A) Timeout() time.Duration { return seconds(a.TimeoutSeconds) }

// A2AService is one entry of a2a.services.
type A2AService struct {
	// Name makes the tool a2a@<name>: letters, digits, - and _, unique.
	// Required.
	Name string `yaml:"name"`
	// Endpoint is the peer's base URL or agent card URL (the card is read
	// and the interface chosen from it), or its JSON-RPC URL when version
	// is set. Required.
	Endpoint string `yaml:"endpoint"`
	// Version "1.0" or "0.3" skips the card and speaks that version to
	// endpoint; "" reads the card. Default "".
	Version string `yaml:"version"`
	// Headers are sent with every request to the peer.
	Headers map[string]string `yaml:"headers"`
	// BearerToken, when set, is sent as Authorization: Bearer. Masked by
	// [Config.Redacted].
	BearerToken string `yaml:"bearer_token" secret:"true"`
	// Enabled services are offered. Default true.
	Enabled bool `yaml:"enabled"`
	// Description of the peer, shown to the model.
	Description string `yaml:"description"`
	// TimeoutSeconds (timeout_s) bounds one call; 0 = a2a.timeout_s.
	TimeoutSeconds int `yaml:"timeout_s"`
	// MaxDepth bounds a wunder-to-wunder delegation chain. Default 3.
	MaxDepth int `yaml:"max_depth"`
	// CardVerification (card_verification) checks the signatures of the
	// peer's agent card before it is used. Default: none.
	CardVerification A2ACardVerification `yaml:"card_verification"`
	// Publish serves the peer behind wunder at /a2a/<name> (the A2A
	// pass-through): its card with wunder's URLs, its JSON-RPC and
	// HTTP+JSON bindings forwarded, each call decided by the policy
	// (a2a@<name>) and audited. Needs the peer's card (version "").
	// Default false.
	Publish bool `yaml:"publish"`
}

// A2ACardVerification says which keys a peer's card must be signed with
// (A2A 1.0 section 8.4; internal/cardsig).
type A2ACardVerification struct {
	// Require refuses a card that carries no signature. Without it, an
	// unsigned card is used and a signed one must still verify against
	// keys or jwks_url. Default false.
	Require bool `yaml:"require"`
	// Keys are the trusted public keys: PEM text or PEM files' paths
	// ("PUBLIC KEY" or "CERTIFICATE"; EC P-256, EC P-384 or Ed25519),
	// each known by its RFC 7638 thumbprint. Default [].
	Keys []string `yaml:"keys"`
	// JWKSURL (jwks_url) is a JWKS of trusted keys, known by their kid,
	// read through the SSRF guard each time the card is read. Default "".
	JWKSURL string `yaml:"jwks_url"`
	// AllowPrivate lets jwks_url be on a private, loopback or link-local
	// address (the SSRF guard's opt-out). Default false.
	AllowPrivate bool `yaml:"allow_private"`
}

// Enabled reports whether the peer's card is checked at all.
func (c A2ACardVerification) Enabled() bool {
	return c.Require || len(c.Keys) > 0 || c.JWKSURL != ""
}

// Timeout is the service's call timeout: its own or a2a.timeout_s.
func (s A2AService) Timeout(a A2A) time.Duration {
	if s.TimeoutSeconds > 0 {
		return seconds(s.TimeoutSeconds)
	}
	return a.Timeout()
}

// applyDefaults sets the defaults of a new a2a.services entry.
func (s *A2AService) applyDefaults() { *s = A2AService{Enabled: true, MaxDepth: 3} }

var _ entryDefaulter = (*A2AService)(nil)

// A2AServer configures wunder as an A2A agent.
type A2AServer struct {
	// Enabled serves /a2a, /a2a/ and /.well-known/agent-card.json.
	// Default true.
	Enabled bool `yaml:"enabled"`
	// UserID is the user an A2A caller acts as when it names none (the
	// X-Wunder-User header) and its credentials pin none. Default "a2a".
	UserID string `yaml:"user_id"`
	// ToolNames are offered to runs started over A2A (and listed as the
	// card's skills). Default [].
	ToolNames []string `yaml:"tool_names"`
	// Model runs A2A tasks; "" = llm.default.
	Model string `yaml:"model"`
	// ToolActivity sends each tool call as a working status message.
	// Default false.
	ToolActivity bool `yaml:"tool_activity"`
	// Name and Description of the agent card. Defaults "wunder" and "".
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// CardSigningKey (card_signing_key) signs the agent card: PEM text or
	// a PEM file's path, an EC P-256 (ES256), EC P-384 (ES384) or Ed25519
	// (EdDSA) private key. Its public key is served at
	// /.well-known/jwks.json. "" serves the card unsigned. Masked by
	// [Config.Redacted]. Default "".
	CardSigningKey string `yaml:"card_signing_key" secret:"true"`
	// CardSigningKID (card_signing_kid) is the key's kid; "" = its RFC
	// 7638 thumbprint. Default "".
	CardSigningKID string `yaml:"card_signing_kid"`
	// Files says what becomes of the files and data parts of a message
	// that starts a task (docs/a2a.md#files-and-data-parts).
	Files A2AFiles `yaml:"files"`
	// Tenants maps an A2A 1.0 tenant (the HTTP+JSON path prefix, the
	// tenant field of JSON-RPC and gRPC params) to the wunder user it acts
	// for. Empty: a tenant is a wunder user id. Not empty: only its
	// tenants are accepted. Default {}.
	Tenants map[string]string `yaml:"tenants"`
}

// A2AReservedTenant reports whether a tenant cannot be told from a route
// of the HTTP+JSON binding when it prefixes one (/a2a/v1/{tenant}/...):
// the routes' first segments.
func A2AReservedTenant(t string) bool {
	switch t {
	case "message:send", "message:stream", "tasks", "extendedAgentCard":
		return true
	}
	return false
}

// A2APeerTenantPrefix begins the tenant that names a published peer on
// the gRPC binding ("peers/research"; a2awire.PeerTenantPrefix, which
// this package cannot import): no a2a.server.tenants entry may use it.
const A2APeerTenantPrefix = "peers/"

// A2AFiles is a2a.server.files.
type A2AFiles struct {
	// Save keeps a message's files and data parts as files of the
	// caller's workspace, in a folder per message under dir. Default true.
	Save bool `yaml:"save"`
	// Dir is that workspace folder: a relative path. Default
	// "attachments".
	Dir string `yaml:"dir"`
	// FetchURLs (fetch_urls) fetches file parts given by an http(s) URL
	// through the SSRF guard (needs save); false leaves the URL in the
	// message's text. Default true.
	FetchURLs bool `yaml:"fetch_urls"`
	// AllowPrivate lets those URLs be on private, loopback or link-local
	// addresses (the SSRF guard's opt-out). Default false.
	AllowPrivate bool `yaml:"allow_private"`
	// FetchTimeoutSeconds (fetch_timeout_s) bounds one fetch. Default 30.
	FetchTimeoutSeconds int `yaml:"fetch_timeout_s"`
}

// FetchTimeout is fetch_timeout_s as a duration.
func (f A2AFiles) FetchTimeout() time.Duration { return seconds(f.FetchTimeoutSeconds) }

// A2APush configures push notifications.
type A2APush struct {
	// Enabled stores push configs and delivers notifications. Default true.
	Enabled bool `yaml:"enabled"`
	// AllowPrivate lets webhooks target private, loopback and link-local
	// addresses (the SSRF guard's opt-out). Default false.
	AllowPrivate bool `yaml:"allow_private"`
	// MaxAttempts per notification, with exponential backoff. Default 3.
	MaxAttempts int `yaml:"max_attempts"`
	// TimeoutSeconds (timeout_s) bounds one delivery. Default 10.
	TimeoutSeconds int `yaml:"timeout_s"`
	// MaxConfigsPerTask bounds the push configs of one task: each event is
	// sent to every one, so without a bound one task could make wunder
	// post to a webhook without end. Default 10.
	MaxConfigsPerTask int `yaml:"max_configs_per_task"`
}

// Timeout is timeout_s as a duration.
func (p A2APush) Timeout() time.Duration { return seconds(p.TimeoutSeconds) }

func a2aDefaults() A2A {
	return A2A{
		TimeoutSeconds: 120,
		Services:       []A2AService{},
		Server: A2AServer{Enabled: true, UserID: "a2a", ToolNames: []string{}, Name: "wunder", Tenants: map[string]string{},
			Files: A2AFiles{Save: true, Dir: "attachments", FetchURLs: true, FetchTimeoutSeconds: 30}},
		Push: A2APush{Enabled: true, MaxAttempts: 3, TimeoutSeconds: 10, MaxConfigsPerTask: 10},
	}
}

func (c *Config) validateA2A(v checker) {
	a := c.A2A
	atLeast(v, "a2a.timeout_s", a.TimeoutSeconds, 1)
	atLeast(v, "a2a.push.max_attempts", a.Push.MaxAttempts, 1)
	atLeast(v, "a2a.push.max_configs_per_task", a.Push.MaxConfigsPerTask, 1)
	atLeast(v, "a2a.push.timeout_s", a.Push.TimeoutSeconds, 1)
	if err := validUserIDString(a.Server.UserID); err != "" {
		v.fail("a2a.server.user_id", "%s", err)
	}
	v.eachWord("a2a.server.tool_names", a.Server.ToolNames)
	atLeast(v, "a2a.server.files.fetch_timeout_s", a.Server.Files.FetchTimeoutSeconds, 1)
	if d := a.Server.Files.Dir; d == "" || path.IsAbs(d) || strings.Contains(d, `\`) || path.Clean(d) != d || d == "." || strings.HasPrefix(d, "..") {
		v.fail("a2a.server.files.dir", "must be a relative path inside the workspace (such as attachments), got %s", quoteShort(d))
	}
	seen := map[string]bool{}
	for i, s := range a.Services {
		p := indexPath("a2a.services", i)
		switch {
		case !mcpNameRE.MatchString(s.Name):
			v.fail(joinPath(p, "name"), "must be 1-64 letters, digits, - or _, got %s", quoteShort(s.Name))
		case seen[s.Name]:
			v.fail(joinPath(p, "name"), "%q is used by another service", s.Name)
		case A2AReservedName(s.Name):
			v.fail(joinPath(p, "name"), "%q is reserved: /a2a/%s is a binding's path (names v<digits> are reserved)", s.Name, s.Name)
		}
		seen[s.Name] = true
		if s.Endpoint == "" {
			v.fail(joinPath(p, "endpoint"), "is required")
		} else {
			v.httpURL(joinPath(p, "endpoint"), s.Endpoint, true)
		}
		v.oneOf(joinPath(p, "version"), s.Version, []string{"", "1.0", "0.3"})
		atLeast(v, joinPath(p, "timeout_s"), s.TimeoutSeconds, 0)
		atLeast(v, joinPath(p, "max_depth"), s.MaxDepth, 1)
		validateCardVerification(v, joinPath(p, "card_verification"), s)
		if s.Publish && s.Version != "" {
			v.fail(joinPath(p, "publish"), "needs the peer's card, but version %q skips it: leave version empty", s.Version)
		}
	}
	for t, u := range a.Server.Tenants {
		p := joinPath("a2a.server.tenants", t)
		switch {
		case strings.HasPrefix(t, A2APeerTenantPrefix):
			v.fail(p, "%q is reserved: tenants %s<name> name the peers published through wunder (gRPC)", t, A2APeerTenantPrefix)
		case t == "" || len(t) > 128 || strings.ContainsAny(t, "/?#%") || strings.TrimSpace(t) != t:
			v.fail(p, "a tenant is 1-128 characters without / ? # %% or surrounding spaces")
		case A2AReservedTenant(t):
			v.fail(p, "%q is reserved: it is a route of the HTTP+JSON binding", t)
		}
		if err := validUserIDString(u); err != "" {
			v.fail(p, "must name a user id: the user id %s", err)
		}
	}
	if a.Server.CardSigningKey != "" {
		if _, err := cardsig.CheckSigningKey(a.Server.CardSigningKey); err != nil {
			v.fail("a2a.server.card_signing_key", "%v", err)
		}
	} else if a.Server.CardSigningKID != "" {
		v.fail("a2a.server.card_signing_kid", "is set but a2a.server.card_signing_key is not")
	}
}

// validateCardVerification checks a service's card_verification: keys
// that load, a jwks_url, and a card to verify.
func validateCardVerification(v checker, p string, s A2AService) {
	c := s.CardVerification
	if !c.Enabled() {
		return
	}
	if s.Version != "" {
		v.fail(p, "needs the peer's card, but version %q skips it: leave version empty", s.Version)
	}
	if len(c.Keys) == 0 && c.JWKSURL == "" {
		v.fail(p, "has no trusted keys: give keys or jwks_url")
	}
	for i, k := range c.Keys {
		if _, err := cardsig.CheckPublicKey(k); err != nil {
			v.fail(indexPath(joinPath(p, "keys"), i), "%v", err)
		}
	}
	if c.JWKSURL != "" {
		v.httpURL(joinPath(p, "jwks_url"), c.JWKSURL, true)
	}
}
