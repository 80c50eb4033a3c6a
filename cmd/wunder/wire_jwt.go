package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// newJWTVerifier builds the gateway's verifier for JWTs of an external
// identity provider (auth.jwt); nil when jwks_url is not set. It fetches
// the provider's keys once, so a wrong URL fails the start.
func newJWTVerifier(ctx context.Context, c config.JWT, log *slog.Logger) (gateway.Verifier, error) {
	if c.JWKSURL == "" {
		return nil, nil
	}
	v, err := auth.NewJWTVerifier(ctx, auth.JWTOptions{Issuer: c.Issuer, Audience: c.Audience, JWKSURL: c.JWKSURL,
		UserClaim: c.UserClaim, RolesClaim: c.RolesClaim, Leeway: time.Duration(c.LeewaySeconds) * time.Second})
	if err != nil {
		return nil, fmt.Errorf("auth.jwt: %w", err)
	}
	log.Info("bearer JWTs accepted", "issuer", c.Issuer, "audience", c.Audience, "jwks_url", c.JWKSURL)
	return jwtVerifier{v}, nil
}

// jwtVerifier turns a verified JWT into a principal.
type jwtVerifier struct{ v *auth.JWTVerifier }

func (j jwtVerifier) Verify(ctx context.Context, raw string) (*orchestrator.Principal, error) {
	claims, err := j.v.Verify(ctx, raw)
	if err != nil {
		// auth's errors never carry the token.
		return nil, fmt.Errorf("%w: %v", orchestrator.ErrUnauthenticated, err)
	}
	if err := orchestrator.ValidateUserID(claims.UserID); err != nil {
		return nil, fmt.Errorf("%w: the token's user claim is not a valid user id", orchestrator.ErrUnauthenticated)
	}
	roles := claims.Roles
	if len(roles) == 0 {
		roles = []string{orchestrator.UserRoleUser}
	}
	return &orchestrator.Principal{UserID: claims.UserID, Roles: roles, Kind: orchestrator.CredentialJWT}, nil
}
