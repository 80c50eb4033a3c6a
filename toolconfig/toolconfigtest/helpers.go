package toolconfigtest

import "github.com/wunder/wunder/internal/testutil/storetest"

// mustDo is the suites' shared assertion (internal/testutil/storetest).
var mustDo = storetest.MustDo
