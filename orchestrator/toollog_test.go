package orchestrator

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
)

// batchStore records the batches of tool logs it is given; the first
// one waits for release.
type batchStore struct {
	Store
	entered, release chan struct{}
	mu               sync.Mutex
	batches          [][]string // the call ids of each batch
}

func (s *batchStore) AppendToolLogs(_ context.Context, logs []*ToolLog) error {
	s.mu.Lock()
	first := len(s.batches) == 0
	ids := make([]string, len(logs))
	for i, l := range logs {
		ids[i] = l.CallID
	}
	s.batches = append(s.batches, ids)
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.release
	}
	return nil
}

// Tool logs queued while a batch is written go together in the next one,
// in order; stop writes what is queued, and a log added after stop is
// written at once.
func TestToolLogsGoInBatches(t *testing.T) {
	s := &batchStore{entered: make(chan struct{}), release: make(chan struct{})}
	w := newToolLogs(s, slog.New(slog.DiscardHandler))
	w.add(&ToolLog{CallID: "1"})
	<-s.entered // the first batch is being written
	for _, id := range []string{"2", "3", "4", "5"} {
		w.add(&ToolLog{CallID: id})
	}
	close(s.release)
	w.stop()
	w.add(&ToolLog{CallID: "6"})
	want := [][]string{{"1"}, {"2", "3", "4", "5"}, {"6"}}
	if !slices.EqualFunc(s.batches, want, slices.Equal) {
		t.Fatalf("batches = %v; want %v", s.batches, want)
	}
	w.stop() // a second stop returns too
}

// oneByOne is a store without AppendToolLogs.
type oneByOne struct {
	Store
	mu  sync.Mutex
	ids []string
}

func (s *oneByOne) AppendToolLog(_ context.Context, l *ToolLog) error {
	s.mu.Lock()
	s.ids = append(s.ids, l.CallID)
	s.mu.Unlock()
	return nil
}

func TestToolLogsOneByOneWithoutBatches(t *testing.T) {
	s := &oneByOne{}
	w := newToolLogs(s, slog.New(slog.DiscardHandler))
	for _, id := range []string{"1", "2", "3"} {
		w.add(&ToolLog{CallID: id})
	}
	w.stop()
	if !slices.Equal(s.ids, []string{"1", "2", "3"}) {
		t.Fatalf("stored %v; want all three, in order", s.ids)
	}
}

// flush waits for the logs added before it, not for later ones, and
// gives up with its context.
func TestToolLogsFlush(t *testing.T) {
	s := &batchStore{entered: make(chan struct{}), release: make(chan struct{})}
	w := newToolLogs(s, slog.New(slog.DiscardHandler))
	var released sync.Once
	release := func() { released.Do(func() { close(s.release) }) }
	t.Cleanup(w.stop)
	t.Cleanup(release) // first: stop waits for the held write
	if err := w.flush(t.Context()); err != nil {
		t.Fatalf("flush with nothing queued: %v", err)
	}
	w.add(&ToolLog{CallID: "1"})
	<-s.entered // its write is held
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.flush(ctx); err == nil {
		t.Fatal("flush returned before the held write, with its context cancelled")
	}
	flushed := make(chan error, 1)
	go func() { flushed <- w.flush(t.Context()) }()
	select {
	case err := <-flushed:
		t.Fatalf("flush returned (%v) while the log was still being written", err)
	default:
	}
	release()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
}
