package accountstest

import (
	"github.com/wunder/wunder/internal/testutil/storetest"
	"github.com/wunder/wunder/orchestrator"
)

// txt is what a store keeps of a string.
var txt = orchestrator.StoredText

// memDefaultLimit is the page size of a listing without a limit.
const memDefaultLimit = 100

// The suites' shared helpers (internal/testutil/storetest).
var (
	stamp    = storetest.Stamp
	stampPtr = storetest.StampPtr
	at       = storetest.At
	us       = storetest.US
	mustDo   = storetest.MustDo
	wantErr  = storetest.WantErr
	diff     = storetest.Diff
)

// pageLen is how many of n accounts a page takes.
func pageLen(p orchestrator.Page, n int) int { return storetest.PageLen(p, n, memDefaultLimit) }
