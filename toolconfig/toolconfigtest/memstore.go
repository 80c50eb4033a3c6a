package toolconfigtest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// Stores is both stores of run-time tool configuration.
type Stores interface {
	toolconfig.FileStore
	toolconfig.Store
}

// NewMemStore returns an in-memory [Stores] for tests. It
// passes [RunStoreTests] with the same rules as the SQL store.
func NewMemStore() Stores {
	return &memToolConfig{files: map[fileKey]toolconfig.File{}, configs: map[string][]byte{}}
}

type fileKey struct{ owner, kind, name, path string }

type memToolConfig struct {
	// mu guards files and configs.
	mu      sync.Mutex
	files   map[fileKey]toolconfig.File
	configs map[string][]byte // user id -> JSON of the stored UserToolConfig
}

func (m *memToolConfig) PutToolFiles(_ context.Context, owner, kind, name string, files []toolconfig.File, replace bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now().UTC().Truncate(time.Microsecond)
	if replace {
		keep := map[string]bool{}
		for _, f := range files {
			keep[f.Path] = true
		}
		for k := range m.files {
			if k.owner == owner && k.kind == kind && k.name == name && !keep[k.path] {
				delete(m.files, k)
			}
		}
	}
	for _, f := range files {
		sum := sha256.Sum256(f.Data)
		m.files[fileKey{owner, kind, name, f.Path}] = toolconfig.File{Owner: owner, Kind: kind, Name: name, Path: f.Path,
			Data: append([]byte{}, f.Data...), Size: int64(len(f.Data)), SHA256: hex.EncodeToString(sum[:]), UpdatedAt: now}
	}
	return nil
}

func (m *memToolConfig) ListToolFiles(_ context.Context, owner, kind, name string, withData bool) ([]toolconfig.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []toolconfig.File{}
	for k, f := range m.files {
		if k.owner != owner || k.kind != kind || (name != "" && k.name != name) {
			continue
		}
		if withData {
			f.Data = append([]byte{}, f.Data...)
		} else {
			f.Data = nil
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b toolconfig.File) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Path, b.Path))
	})
	return out, nil
}

func (m *memToolConfig) DeleteToolFiles(_ context.Context, owner, kind, name string, paths ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k := range m.files {
		if k.owner == owner && k.kind == kind && k.name == name && (len(paths) == 0 || slices.Contains(paths, k.path)) {
			delete(m.files, k)
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: %s %q has no such files", orchestrator.ErrNotFound, kind, name)
	}
	return nil
}

func (m *memToolConfig) GetUserToolConfig(_ context.Context, userID string) (*toolconfig.UserConfig, error) {
	m.mu.Lock()
	b, ok := m.configs[userID]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: tool configuration of %q", orchestrator.ErrNotFound, userID)
	}
	c := new(toolconfig.UserConfig)
	return c, json.Unmarshal(b, c)
}

func (m *memToolConfig) PutUserToolConfig(_ context.Context, c *toolconfig.UserConfig) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var stored int64
	if b, ok := m.configs[c.UserID]; ok {
		var old toolconfig.UserConfig
		_ = json.Unmarshal(b, &old)
		stored = old.Revision
	}
	if stored != c.Revision {
		return fmt.Errorf("%w: tool configuration of %q changed since revision %d", orchestrator.ErrConflict, c.UserID, c.Revision)
	}
	next := *c
	next.Revision++
	next.UpdatedAt = time.Now().UTC().Truncate(time.Microsecond)
	b, err := json.Marshal(&next)
	if err != nil {
		return fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err)
	}
	m.configs[c.UserID] = b
	c.Revision, c.UpdatedAt = next.Revision, next.UpdatedAt
	return nil
}

func (m *memToolConfig) ListSharedToolConfigs(ctx context.Context) ([]*toolconfig.UserConfig, error) {
	m.mu.Lock()
	ids := make([]string, 0, len(m.configs))
	for id := range m.configs {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	slices.Sort(ids)
	out := []*toolconfig.UserConfig{}
	for _, id := range ids {
		c, err := m.GetUserToolConfig(ctx, id)
		if err != nil {
			return nil, err
		}
		if c.Shares() {
			out = append(out, c)
		}
	}
	return out, nil
}
