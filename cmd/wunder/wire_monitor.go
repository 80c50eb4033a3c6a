package main

import (
	"context"
	"os"

	"github.com/wunder/wunder/adapters/builtin"
)

// deleteWorkspace removes a user's workspace directory (the admin's
// DELETE /wunder/admin/users/{user_id}).
func deleteWorkspace(tools *builtin.Set) func(ctx context.Context, userID string) error {
	return func(_ context.Context, userID string) error {
		ws, err := tools.Workspace(userID)
		if err != nil {
			return err
		}
		return os.RemoveAll(ws.Dir())
	}
}
