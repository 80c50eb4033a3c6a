package main

import (
	"context"
	"io"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
)

// The workspace API (/wunder/workspace, gateway/workspace.go) over the
// built-in tools' workspaces: the same directories, the same resolver and
// deny globs the tools use.

// workspaceLimits are the routes' bounds from the configuration.
func workspaceLimits(cfg *config.Config) gateway.WorkspaceLimits {
	return gateway.WorkspaceLimits{MaxFileBytes: cfg.Security.MaxFileBytes,
		MaxUploadBytes: cfg.Workspace.MaxUploadBytes, MaxUploadTotalBytes: cfg.Workspace.MaxUploadTotalBytes}
}

// workspaceAPI adapts *builtin.Set to gateway.Workspaces.
type workspaceAPI struct{ set *builtin.Set }

var _ gateway.Workspaces = workspaceAPI{}

func toEntry(in builtin.FileInfo) gateway.WorkspaceEntry {
	return gateway.WorkspaceEntry{Name: in.Name, Path: in.Path, Type: in.Type, Size: in.Size, UpdatedAt: in.UpdatedAt, Children: toEntries(in.Children)}
}

func toEntries(in []builtin.FileInfo) []gateway.WorkspaceEntry {
	if in == nil {
		return nil
	}
	out := make([]gateway.WorkspaceEntry, len(in))
	for i, e := range in {
		out[i] = toEntry(e)
	}
	return out
}

func (a workspaceAPI) WorkspaceUsage(ctx context.Context, userID string) (gateway.WorkspaceUsage, error) {
	u, err := a.set.Usage(ctx, userID)
	return gateway.WorkspaceUsage(u), err // same fields, same meaning
}

func (a workspaceAPI) StatWorkspace(ctx context.Context, userID, path string) (gateway.WorkspaceEntry, error) {
	e, err := a.set.Stat(ctx, userID, path)
	return toEntry(e), err
}

func (a workspaceAPI) ListWorkspace(ctx context.Context, userID, path string, o gateway.WorkspaceListOptions) (*gateway.WorkspaceListing, error) {
	l, err := a.set.List(ctx, userID, path, builtin.ListOptions(o))
	if err != nil {
		return nil, err
	}
	return &gateway.WorkspaceListing{Entries: toEntries(l.Entries), Total: l.Total, Truncated: l.Truncated}, nil
}

func (a workspaceAPI) ReadWorkspaceFile(ctx context.Context, userID, path string, maxBytes int) (*gateway.WorkspaceFile, error) {
	f, err := a.set.ReadFile(ctx, userID, path, maxBytes)
	if err != nil {
		return nil, err
	}
	return &gateway.WorkspaceFile{Entry: toEntry(f.Info), Data: f.Data, Truncated: f.Truncated, Binary: f.Binary, TooLarge: f.TooLarge, Limit: f.Limit}, nil
}

func (a workspaceAPI) OpenWorkspaceFile(ctx context.Context, userID, path string) (io.ReadSeekCloser, gateway.WorkspaceEntry, error) {
	f, e, err := a.set.Open(ctx, userID, path)
	if err != nil {
		return nil, gateway.WorkspaceEntry{}, err
	}
	return f, toEntry(e), nil
}

func (a workspaceAPI) SearchWorkspace(ctx context.Context, userID string, q gateway.WorkspaceSearch) (*gateway.WorkspaceSearchResult, error) {
	res, err := a.set.Search(ctx, userID, builtin.SearchOptions(q))
	if err != nil {
		return nil, err
	}
	out := &gateway.WorkspaceSearchResult{Names: toEntries(res.Names), Truncated: res.Truncated, SkippedFiles: res.SkippedFiles}
	for _, m := range res.Matches {
		out.Matches = append(out.Matches, gateway.WorkspaceMatch(m))
	}
	return out, nil
}

func (a workspaceAPI) ArchiveWorkspace(ctx context.Context, userID, path string) (*gateway.WorkspaceArchive, error) {
	z, err := a.set.Archive(ctx, userID, path)
	if err != nil {
		return nil, err
	}
	return &gateway.WorkspaceArchive{Name: z.Name, Entries: z.Entries, Bytes: z.Bytes, WriteTo: z.WriteTo, Close: z.Close}, nil
}

func (a workspaceAPI) MkdirWorkspace(ctx context.Context, userID, path string) error {
	return a.set.Mkdir(ctx, userID, path)
}

func (a workspaceAPI) WriteWorkspaceFile(ctx context.Context, userID, path string, src io.Reader, create bool) (gateway.WorkspaceEntry, error) {
	e, err := a.set.WriteFile(ctx, userID, path, src, create)
	return toEntry(e), err
}

func (a workspaceAPI) MoveWorkspace(ctx context.Context, userID, src, dst string) error {
	return a.set.Move(ctx, userID, src, dst)
}

func (a workspaceAPI) CopyWorkspace(ctx context.Context, userID, src, dst string) (int, error) {
	return a.set.Copy(ctx, userID, src, dst)
}

func (a workspaceAPI) RemoveWorkspace(ctx context.Context, userID, path string) (int, error) {
	return a.set.Remove(ctx, userID, path)
}

func (a workspaceAPI) EmptyWorkspace(ctx context.Context, userID string) (int, error) {
	return a.set.Empty(ctx, userID)
}
