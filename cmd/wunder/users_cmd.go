package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// `wunder user` and `wunder token` work on the store directly, so an
// operator can bootstrap the first admin without the API (there is no
// default admin account).

// withStore opens the configured store (migrated) for one command.
func withStore(cmd *cobra.Command, rf *rootFlags, fn func(ctx context.Context, st *storage.Store) error) error {
	return withConfigStore(cmd, rf, func(ctx context.Context, _ *config.Config, st *storage.Store) error { return fn(ctx, st) })
}

// withConfigStore is withStore for commands that need the configuration
// too.
func withConfigStore(cmd *cobra.Command, rf *rootFlags, fn func(ctx context.Context, cfg *config.Config, st *storage.Store) error) error {
	cfg, err := loadConfig(rf.configPath)
	if err != nil {
		return err
	}
	st, err := openStore(cmd.Context(), cfg, newLogger(cfg), true)
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer st.Close()
	if err := fn(cmd.Context(), cfg, st); err != nil {
		if errors.Is(err, orchestrator.ErrInvalidArgument) || errors.Is(err, orchestrator.ErrNotFound) || errors.Is(err, orchestrator.ErrConflict) {
			return withCode(exitUsage, err)
		}
		return withCode(exitFailure, err)
	}
	return nil
}

// readPassword reads one line from r (stdin): passwords are never flags,
// which would land in shell history and the process list.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	pw := strings.TrimRight(line, "\r\n")
	if len(pw) < 8 {
		return "", fmt.Errorf("%w: the password (read from stdin) must be at least 8 bytes", orchestrator.ErrInvalidArgument)
	}
	return pw, nil
}

func newUserCmd(rf *rootFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage user accounts in the store (add, list, disable, passwd)"}
	var roles []string
	var display string
	var admin bool
	add := &cobra.Command{
		Use:   "add USER_ID",
		Short: "Add an account; the password is read from stdin",
		Long: "Add an account; the password is read from stdin. The id is held to the rule for new ids (docs/security.md):\n" +
			"it is stored in its normal form (NFKC, lower case), must be unique ignoring case, and may not be one the\n" +
			"server uses (a2a, wunder, a2a.server.user_id, mcp.server.user_id, wunder-*, bench-*) or passes for it\n" +
			"(admin, system, root, anonymous).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withConfigStore(cmd, rf, func(ctx context.Context, cfg *config.Config, st *storage.Store) error {
				id, err := userIDRule(cfg).Check(args[0]) // wire_auth.go
				if err != nil {
					return err
				}
				if admin {
					roles = []string{orchestrator.UserRoleAdmin} // --admin: the first admin, as the console's docs say
				}
				for _, r := range roles {
					if r != orchestrator.UserRoleAdmin && r != orchestrator.UserRoleUser {
						return fmt.Errorf("%w: role %q (want admin or user)", orchestrator.ErrInvalidArgument, r)
					}
				}
				pw, err := readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				hash, err := auth.HashPassword(pw)
				if err != nil {
					return fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err)
				}
				u := &accounts.User{ID: id, DisplayName: display, Roles: roles, PasswordHash: hash}
				if err := st.CreateUser(ctx, u); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added user %s (%s)\n", u.ID, strings.Join(u.Roles, ","))
				return nil
			})
		},
	}
	add.Flags().StringSliceVar(&roles, "role", []string{orchestrator.UserRoleUser}, "roles: user, admin")
	add.Flags().StringVar(&display, "display-name", "", "display name")
	add.Flags().BoolVar(&admin, "admin", false, "make the account an admin (the same as --role admin)")
	add.MarkFlagsMutuallyExclusive("admin", "role")
	list := &cobra.Command{
		Use: "list", Short: "List accounts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd, rf, func(ctx context.Context, st *storage.Store) error {
				us, err := st.ListUsers(ctx, orchestrator.Page{Limit: 1 << 20})
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "USER\tROLES\tDISABLED\tCREATED\n")
				for _, u := range us {
					fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", u.ID, strings.Join(u.Roles, ","), u.Disabled, u.CreatedAt.Format(time.DateTime))
				}
				return tw.Flush()
			})
		},
	}
	var enable bool
	disable := &cobra.Command{
		Use: "disable USER_ID", Short: "Disable an account (its tokens stop working); --enable undoes it", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, rf, func(ctx context.Context, st *storage.Store) error {
				u, err := st.GetUser(ctx, args[0])
				if err != nil {
					return err
				}
				u.Disabled, u.UpdatedAt = !enable, time.Time{}
				if err := st.UpdateUser(ctx, u); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "user %s disabled: %v\n", u.ID, u.Disabled)
				return nil
			})
		},
	}
	disable.Flags().BoolVar(&enable, "enable", false, "enable the account instead")
	passwd := &cobra.Command{
		Use: "passwd USER_ID", Short: "Set an account's password (read from stdin); every token of the user is revoked", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, rf, func(ctx context.Context, st *storage.Store) error {
				pw, err := readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				hash, err := auth.HashPassword(pw)
				if err != nil {
					return fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err)
				}
				if err := st.SetPassword(ctx, args[0], hash); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "password of %s set; their tokens are revoked\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(add, list, disable, passwd)
	return cmd
}

func newTokenCmd(rf *rootFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Issue and revoke users' API tokens in the store"}
	var name string
	var ttl time.Duration
	issue := &cobra.Command{
		Use: "issue USER_ID", Short: "Issue an API token; the secret is printed once", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withConfigStore(cmd, rf, func(ctx context.Context, cfg *config.Config, st *storage.Store) error {
				maxTTL := cfg.Auth.MaxTokenTTL()
				switch {
				case ttl == 0:
					ttl = maxTTL
				case ttl < 0 || ttl > maxTTL:
					return fmt.Errorf("%w: --ttl must be between 1s and %v, the longest a token may live (auth.max_token_ttl_s = %d)",
						orchestrator.ErrInvalidArgument, maxTTL, cfg.Auth.MaxTokenTTLSeconds)
				}
				if _, err := st.GetUser(ctx, args[0]); err != nil {
					return err
				}
				secret, hash := auth.NewToken()
				exp := time.Now().Add(ttl)
				t := &accounts.Token{ID: auth.NewID(), Hash: hash, UserID: args[0], Name: name, Kind: accounts.TokenAPI, ExpiresAt: &exp}
				if err := st.CreateToken(ctx, t); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "token %s for %s (keep the secret; it is not stored)\n", t.ID, t.UserID)
				fmt.Fprintln(cmd.OutOrStdout(), secret)
				return nil
			})
		},
	}
	issue.Flags().StringVar(&name, "name", "cli", "a name for the token")
	issue.Flags().DurationVar(&ttl, "ttl", 0, "lifetime (e.g. 720h), at most auth.max_token_ttl_s; 0 = that maximum")
	revoke := &cobra.Command{
		Use: "revoke TOKEN_ID", Short: "Revoke a token by its id", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, rf, func(ctx context.Context, st *storage.Store) error {
				if err := st.DeleteToken(ctx, "", args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(issue, revoke)
	return cmd
}
