package memorytest

import "github.com/wunder/wunder/internal/testutil/storetest"

// The suites' shared helpers (internal/testutil/storetest).
var (
	stamp   = storetest.Stamp
	mustDo  = storetest.MustDo
	wantErr = storetest.WantErr
	diff    = storetest.Diff
)
