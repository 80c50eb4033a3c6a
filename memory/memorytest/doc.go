// Package memorytest holds the contract every [memory.Store] passes
// ([RunStoreTests]; storage runs it on SQLite and PostgreSQL) and an
// in-memory store that passes it ([NewMemStore]), for the tests of the
// packages that use long-term memory.
package memorytest
