// Package accountstest holds the contract every [accounts.Store] passes
// ([RunStoreTests]; storage runs it on SQLite and PostgreSQL) and an
// in-memory store that passes it ([NewMemStore]), for the tests of the
// packages that authenticate with accounts.
package accountstest

import "github.com/wunder/wunder/accounts"

var _ accounts.Store = (*memAccounts)(nil)
