package main

import (
	"context"
	"log/slog"
	"slices"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/storage"
)

// authOptions are the gateway's authenticator (config auth): accounts in
// the store, JWTs through verifier (nil: none), token lifetimes, the
// login throttles, the hashing budget, and the rule for new user ids,
// which reserves the ids this server's A2A and MCP traffic acts as.
func authOptions(cfg *config.Config, store *storage.Store, verifier gateway.Verifier) gateway.AuthOptions {
	a := cfg.Auth
	return gateway.AuthOptions{
		Accounts: store, AllowRegister: a.AllowRegister, Verifier: verifier,
		TokenTTL: a.TokenTTL(), MaxTokenTTL: a.MaxTokenTTL(),
		LoginLimiter:   auth.NewLimiter(a.Login.PerUser.PerSecond, a.Login.PerUser.Burst),
		AddressLimiter: auth.NewLimiter(a.Login.PerAddress.PerSecond, a.Login.PerAddress.Burst),
		Passwords:      auth.NewHasher(int64(a.PasswordHashing.MaxMemoryMB)<<20, a.PasswordHashing.MaxWait()),
		UserIDs:        userIDRule(cfg),
	}
}

// userIDRule is the rule for new account ids, reserving the ids the
// server acts as (a2a.server.user_id, mcp.server.user_id).
func userIDRule(cfg *config.Config) gateway.UserIDRule {
	return gateway.NewUserIDRule(cfg.A2A.Server.UserID, cfg.MCP.Server.UserID)
}

// warnServerOwnedAccounts logs the accounts, made before ids the server
// uses were reserved, whose id is one the server's own A2A or MCP traffic
// acts as: their owners see what that traffic stores. They keep working;
// an admin should rename them (create another, delete this one).
func warnServerOwnedAccounts(ctx context.Context, cfg *config.Config, store *storage.Store, log *slog.Logger) {
	ids := slices.Compact(slices.Sorted(slices.Values([]string{cfg.A2A.Server.UserID, cfg.MCP.Server.UserID, "a2a", "wunder"})))
	for _, id := range ids {
		if u, err := store.GetUser(ctx, id); err == nil {
			log.Warn("an account has an id the server acts as itself: its owner sees what A2A or MCP callers without a user of their own store; "+
				"create the person another account and delete this one", "user_id", u.ID)
		}
	}
}
