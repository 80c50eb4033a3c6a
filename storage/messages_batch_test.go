package storage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// Message batches on both sides of maxPreparedRows (SQLite's prepared
// statement, bun's multi-row insert; PostgreSQL's batch writer) store the
// same rows in the same order, and ListMessages with a limit gives the
// last ones, oldest first. A batch for a missing session stores nothing.
func TestAppendMessagesBatchSizes(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			sizes := []int{1, maxPreparedRows, maxPreparedRows + 1, 3*maxPreparedRows + 7}
			for _, n := range sizes {
				id := fmt.Sprintf("s%d", n)
				must(t, s.CreateSession(ctx, &orchestrator.Session{ID: id, UserID: "u"}))
				msgs := make([]orchestrator.Message, n)
				for i := range msgs {
					msgs[i] = orchestrator.Message{Role: "user", Content: fmt.Sprintf("m%03d", i)}
					if i%5 == 4 {
						msgs[i] = orchestrator.Message{Role: "assistant", Content: "",
							ToolCalls: []orchestrator.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "t", Arguments: []byte(`{"i":1}`)}}}
					}
				}
				must(t, s.AppendMessages(ctx, id, msgs))
				got, err := s.ListMessages(ctx, id, 0)
				must(t, err)
				if len(got) != n {
					t.Fatalf("batch of %d: %d stored", n, len(got))
				}
				for i, m := range got {
					if m.Role != msgs[i].Role || m.Content != msgs[i].Content || len(m.ToolCalls) != len(msgs[i].ToolCalls) {
						t.Fatalf("batch of %d, message %d = %+v; want %+v", n, i, m, msgs[i])
					}
				}
				last, err := s.ListMessages(ctx, id, 3)
				must(t, err)
				if want := min(3, n); len(last) != want || last[want-1].Content != got[n-1].Content || last[0].Content != got[n-want].Content {
					t.Errorf("batch of %d: the last 3 = %+v", n, last)
				}
			}
			big := make([]orchestrator.Message, maxPreparedRows+1)
			for i := range big {
				big[i] = orchestrator.Message{Role: "user", Content: "x"}
			}
			if err := s.AppendMessages(ctx, "missing", big); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Errorf("a batch for a missing session = %v; want ErrNotFound", err)
			}
			if err := s.AppendMessages(ctx, "missing", big[:1]); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Errorf("one message for a missing session = %v; want ErrNotFound", err)
			}
			n, err := s.db.NewSelect().Table("messages").Where("session_id = 'missing'").Count(ctx)
			must(t, err)
			if n != 0 {
				t.Errorf("%d messages stored for a missing session", n)
			}
			// Messages are their session's: another session's list is its own.
			other, err := s.ListMessages(ctx, fmt.Sprintf("s%d", sizes[0]), 0)
			must(t, err)
			if len(other) != sizes[0] {
				t.Errorf("session s%d lists %d messages", sizes[0], len(other))
			}
		})
	}
}
