package main

import (
	"errors"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/wunder/wunder/internal/config"
)

// tenantSend sends "hi" as the holder of hdr naming tenant ("" = none)
// over binding of wunder's own A2A server, and returns the task's id: the
// a2a-go client for JSON-RPC (the tenant in the params) and HTTP+JSON
// (the tenant as the path prefix), connect-go speaking gRPC (the tenant
// field of the request message).
func tenantSend(t *testing.T, f *fixture, binding sdk.TransportProtocol, hdr map[string]string, tenant string) (string, error) {
	t.Helper()
	if binding == sdk.TransportProtocolGRPC {
		c := connect.NewClient[a2apb.SendMessageRequest, a2apb.SendMessageResponse](&http.Client{Transport: headerRT{hdr: hdr, h2c: true}},
			f.s.url+"/lf.a2a.v1.A2AService/SendMessage", connect.WithGRPC())
		res, err := c.CallUnary(t.Context(), connect.NewRequest(&a2apb.SendMessageRequest{Tenant: tenant,
			Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}}))
		if err != nil {
			return "", err
		}
		return res.Msg.GetTask().GetId(), nil
	}
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), f.s.url)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: headerRT{hdr: hdr}}
	c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{binding}}),
		a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if tenant != "" {
		ctx = sdk.AttachTenant(ctx, tenant)
	}
	res, err := c.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hi"))})
	if err != nil {
		return "", err
	}
	return string(res.(*sdk.Task).ID), nil
}

// refusedAs reports whether err is the refusal of kind on binding: an
// a2a-go sentinel, or the gRPC code.
func refusedAs(err error, kind error, code connect.Code) bool {
	return errors.Is(err, kind) || (connect.CodeOf(err) == code && err != nil)
}

// The A2A 1.0 tenant names the user a request acts for, on every binding
// of wunder's own server and through the pass-through: with no tenant
// table a tenant is a user id, checked as X-Wunder-User is — a user's
// credential acts only as itself (another tenant is permission denied),
// the admin key as the tenant's user, whose task it then is. With a
// table (a2a.server.tenants) only its tenants are accepted, each for its
// user.
func TestA2ATenants(t *testing.T) {
	peer := startPassPeer(t)
	f, tok := passWunder(t, peer, nil)
	alice, bob := bearerOf(tok["alice"]), bearerOf(tok["bob"])
	admin := map[string]string{"X-API-Key": "admin-key"}
	owner := func(task string) string {
		t.Helper()
		for _, u := range []string{"alice", "bob"} {
			if _, code := f.a2a(t, "1.0", "GetTask", `{"id":"`+task+`"}`, bearerOf(tok[u])); code == 0 {
				return u
			}
		}
		return "nobody"
	}
	for _, binding := range []sdk.TransportProtocol{sdk.TransportProtocolJSONRPC, sdk.TransportProtocolHTTPJSON, sdk.TransportProtocolGRPC} {
		t.Run(string(binding), func(t *testing.T) {
			id, err := tenantSend(t, f, binding, alice, "alice")
			if err != nil || owner(id) != "alice" {
				t.Errorf("alice as tenant alice: %q %v, owned by %s", id, err, owner(id))
			}
			if _, err := tenantSend(t, f, binding, alice, "bob"); !refusedAs(err, sdk.ErrUnauthorized, connect.CodePermissionDenied) {
				t.Errorf("alice as tenant bob: %v; want permission denied", err)
			}
			id, err = tenantSend(t, f, binding, admin, "bob")
			if err != nil || owner(id) != "bob" {
				t.Errorf("the admin key as tenant bob: %q %v, owned by %s", id, err, owner(id))
			}
			h := clone(bob)
			h["X-Wunder-User"] = "bob"
			if _, err := tenantSend(t, f, binding, h, "alice"); !refusedAs(err, sdk.ErrInvalidParams, connect.CodeInvalidArgument) {
				t.Errorf("X-Wunder-User bob and tenant alice: %v; want invalid params", err)
			}
		})
	}

	// Through the pass-through the tenant is wunder's: it names the user
	// and is not sent on (the peer's HTTP+JSON routes have no tenant).
	for _, binding := range []sdk.TransportProtocol{sdk.TransportProtocolJSONRPC, sdk.TransportProtocolHTTPJSON} {
		_, c := passClient(t, f, tok["bob"], binding)
		send := func(tenant string) error {
			_, err := c.SendMessage(sdk.AttachTenant(t.Context(), tenant), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hi"))})
			return err
		}
		if err := send("bob"); err != nil {
			t.Errorf("%s: bob as tenant bob through the pass-through: %v", binding, err)
		}
		if err := send("alice"); !errors.Is(err, sdk.ErrUnauthorized) {
			t.Errorf("%s: bob as tenant alice through the pass-through: %v; want permission denied", binding, err)
		}
	}
}

// With a2a.server.tenants, the table decides: acme is alice's, and a
// tenant it does not list — a user id included — is refused.
func TestA2ATenantTable(t *testing.T) {
	peer := startPassPeer(t)
	f, tok := passWunder(t, peer, func(c *config.Config) { c.A2A.Server.Tenants = map[string]string{"acme": "alice"} })
	alice := bearerOf(tok["alice"])
	for _, binding := range []sdk.TransportProtocol{sdk.TransportProtocolJSONRPC, sdk.TransportProtocolHTTPJSON, sdk.TransportProtocolGRPC} {
		if _, err := tenantSend(t, f, binding, alice, "acme"); err != nil {
			t.Errorf("%s: alice as tenant acme: %v", binding, err)
		}
		if _, err := tenantSend(t, f, binding, alice, "alice"); !refusedAs(err, sdk.ErrUnauthorized, connect.CodePermissionDenied) {
			t.Errorf("%s: alice as tenant alice, which the table does not list: %v; want permission denied", binding, err)
		}
		if _, err := tenantSend(t, f, binding, bearerOf(tok["bob"]), "acme"); !refusedAs(err, sdk.ErrUnauthorized, connect.CodePermissionDenied) {
			t.Errorf("%s: bob as tenant acme (alice's): %v; want permission denied", binding, err)
		}
	}
}
