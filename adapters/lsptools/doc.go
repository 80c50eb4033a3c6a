// Package lsptools offers an [lsp.Pool] to the model: the lsp tool (alias
// LSP查询, source "lsp") and, through [Set.After], the diagnostics summary
// that adapters/builtin appends to write_file, replace_text and edit_file.
//
//	set := lsptools.New(pool, workspaces, &lsptools.Options{DiagnosticsWait: 2 * time.Second})
//	tools, _ := set.Tools(ctx, "alice") // [lsp], or none without servers
//
// The tool's operations are definition, references, hover,
// document_symbol, workspace_symbol, implementation, call_hierarchy and
// diagnostics. Paths are relative to the user's workspace and resolved by
// the workspace (the built-in tools' rules: no escapes, no symlinks out);
// lines and characters are 1-based, characters counted in code points and
// converted to the protocol's 0-based UTF-16 offsets. Results name files
// relative to the workspace with a few lines of context, never read a file
// outside it, and are capped (Options.MaxResultBytes). docs/lsp.md is the
// reference for users.
package lsptools
