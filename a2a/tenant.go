package a2a

import (
	"encoding/json"
	"net/http"
	"strings"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// Tenants (A2A 1.0: the path prefix of the HTTP+JSON binding's routes and
// the tenant field of every request message): a request may say which tenant it is
// for, as the path prefix of an HTTP+JSON route (/a2a/v1/{tenant}/...) or
// the tenant field of its JSON-RPC 1.0 or gRPC params. wunder's tenants
// are its users: a tenant names the user the request acts for, as the
// X-Wunder-User header does, and the same rule checks it
// (Options.Identify: a user's credential acts only for itself, an admin
// for anyone). Options.Tenants, when not empty, is a table of the tenants
// accepted and their users; a tenant it does not list is refused. 0.3 has
// no tenant: its params' tenant is not read.

// maxTenantEcho bounds a tenant repeated in an error message.
const maxTenantEcho = 64

// requestedUser is the user a call names: its tenant's (the path prefix
// of an HTTP+JSON route, else its 1.0 params' tenant field) or its
// X-Wunder-User header; "" when it names none. A tenant and a header
// that name two users are invalid params.
func (h *Handler) requestedUser(r *http.Request, c *call) (string, error) {
	named := strings.TrimSpace(r.Header.Get("X-Wunder-User"))
	tenant, err := tenantOf(c)
	if err != nil || tenant == "" {
		return named, err
	}
	user, err := h.tenantUser(tenant)
	if err != nil {
		return "", err
	}
	if named != "" && named != user {
		return "", errParams("X-Wunder-User %q and tenant %q name different users", clip(named), clip(tenant))
	}
	return user, nil
}

// tenantUser maps a tenant to its user: the table's entry, or, with no
// table, the tenant itself.
func (h *Handler) tenantUser(tenant string) (string, error) {
	if len(h.opts.Tenants) == 0 {
		return tenant, nil
	}
	if u, ok := h.opts.Tenants[tenant]; ok {
		return u, nil
	}
	return "", errKind(orchestrator.ErrPermissionDenied, "permission denied: no tenant %q is configured (a2a.server.tenants)", clip(tenant))
}

// tenantOf is the tenant a 1.0 call names in its params ("" for none, and
// for every 0.3 call). The HTTP+JSON binding has put its path's tenant
// there (serveREST).
func tenantOf(c *call) (string, error) {
	if c.v != w.V10 || len(c.m.Params) == 0 {
		return "", nil
	}
	var p struct {
		Tenant json.RawMessage `json:"tenant"`
	}
	if json.Unmarshal(c.m.Params, &p) != nil || len(p.Tenant) == 0 || string(p.Tenant) == "null" {
		return "", nil // not an object: the method's decoder says so
	}
	var t string
	if err := json.Unmarshal(p.Tenant, &t); err != nil {
		return "", errParams("tenant must be a string")
	}
	return t, nil
}

// identify sets the call's user: the one it names (requestedUser),
// checked by Options.Identify.
func (h *Handler) identify(r *http.Request, c *call) error {
	requested, err := h.requestedUser(r, c)
	if err != nil {
		return err
	}
	identify := h.opts.Identify
	if identify == nil {
		identify = h.defaultIdentify
	}
	c.userID, err = identify(r, requested)
	return err
}

func (h *Handler) defaultIdentify(_ *http.Request, requested string) (string, error) {
	if requested != "" {
		return requested, nil
	}
	return h.opts.DefaultUser, nil
}

// splitTenant takes the tenant off the front of an HTTP+JSON route's
// path: "acme/tasks/t1" is tenant "acme" and route "tasks/t1". The route
// is first read without a tenant (restRoute), so a path that is a route
// is never read as a tenant's.
func splitTenant(sub string) (tenant, rest string, ok bool) {
	tenant, rest, ok = strings.Cut(sub, "/")
	return tenant, rest, ok && tenant != "" && rest != ""
}

func clip(s string) string {
	if len(s) > maxTenantEcho {
		return s[:maxTenantEcho] + "..."
	}
	return s
}
