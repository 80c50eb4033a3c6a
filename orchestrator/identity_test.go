package orchestrator_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

func TestActingUser(t *testing.T) {
	user := &orchestrator.Principal{UserID: "alice", Roles: []string{"user"}, Kind: orchestrator.CredentialToken}
	admin := &orchestrator.Principal{UserID: "root", Roles: []string{"admin"}, Kind: orchestrator.CredentialToken}
	key := &orchestrator.Principal{Kind: orchestrator.CredentialAPIKey}
	anon := &orchestrator.Principal{Kind: orchestrator.CredentialAnonymous}
	tests := []struct {
		name      string
		p         *orchestrator.Principal
		requested string
		want      string
		wantErr   error
	}{
		{"user names nobody", user, "", "alice", nil},
		{"user names itself", user, "alice", "alice", nil},
		{"user names another", user, "bob", "", orchestrator.ErrPermissionDenied},
		{"admin user names another", admin, "bob", "bob", nil},
		{"admin user names nobody: everyone", admin, "", "", nil},
		{"api key names a user", key, "bob", "bob", nil},
		{"api key names nobody: everyone", key, "", "", nil},
		{"anonymous names a user", anon, "bob", "bob", nil},
		{"bad user id", key, "a/b", "", orchestrator.ErrInvalidArgument},
		{"no principal", nil, "bob", "", orchestrator.ErrUnauthenticated},
		{"user credential naming no user", &orchestrator.Principal{Kind: orchestrator.CredentialJWT}, "", "", orchestrator.ErrUnauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.p != nil {
				ctx = orchestrator.WithPrincipal(ctx, tt.p)
			}
			got, err := orchestrator.ActingUser(ctx, tt.requested)
			if got != tt.want || (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Errorf("ActingUser(%q) = %q, %v; want %q, %v", tt.requested, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPrincipalIsAdmin(t *testing.T) {
	for _, tt := range []struct {
		p    *orchestrator.Principal
		want bool
	}{
		{nil, false},
		{&orchestrator.Principal{Kind: orchestrator.CredentialAPIKey}, true},
		{&orchestrator.Principal{Kind: orchestrator.CredentialAnonymous}, true},
		{&orchestrator.Principal{Kind: orchestrator.CredentialToken, UserID: "a", Roles: []string{"user"}}, false},
		{&orchestrator.Principal{Kind: orchestrator.CredentialJWT, UserID: "a", Roles: []string{"admin"}}, true},
	} {
		if got := tt.p.IsAdmin(); got != tt.want {
			t.Errorf("%+v.IsAdmin() = %v; want %v", tt.p, got, tt.want)
		}
	}
}
