package knowledge

// BuildCount reports how many indexes s has built.
func BuildCount(s *Set) int { return s.cache.buildCount() }
