package storage

import "context"

// Ping checks that the database answers (GET /readyz).
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
