// Package toolconfigtest holds the contract every store of run-time tool
// configuration passes ([RunStoreTests]; storage runs it on SQLite and
// PostgreSQL) and an in-memory store that passes it ([NewMemStore]), for
// the tests of the packages that read tool configurations.
package toolconfigtest
