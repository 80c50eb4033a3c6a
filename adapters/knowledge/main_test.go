package knowledge_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every index is closed with its Set (or when replaced): scorch's
// goroutines must not outlive the tests. bleve's own analysis workers,
// started when the package is loaded, live as long as the process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}
