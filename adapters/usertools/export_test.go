package usertools

import "time"

// SetClock replaces the Set's clock (idle and retry tests).
func SetClock(s *Set, now func() time.Time) {
	s.mu.Lock()
	s.now = now
	s.mu.Unlock()
}
