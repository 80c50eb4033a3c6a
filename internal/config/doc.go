// Package config is wunder's typed configuration: the schema ([Config] and its
// sections), the one source of defaults ([Default], in defaults.go), the
// loader ([Load]) and the checks ([Config.Validate]). It is a leaf: it imports
// no other wunder package, and only cmd/wunder imports it; other packages get
// plain values or their own *Options built from it.
//
// Where a value comes from, later beating earlier:
//
//	Default()
//	  <- base YAML      (--config, WUNDER_CONFIG_PATH, or ./config/wunder.yaml if present)
//	  <- override YAML  (<data_dir>/config/wunder.override.yaml if present; written by admin APIs)
//	     merged node by node: mappings key by key, scalars and sequences replace
//	  <- ${VAR} / ${VAR:-default} in scalar values ($$ = a literal $)
//	  <- WUNDER_* environment variables (WUNDER_HOST, WUNDER_PORT, WUNDER_LLM_MODEL, ...)
//	  <- derived defaults (workspace.root, storage.db_path under data_dir)
//	  -> Validate
//
// The YAML is parsed into nodes, merged and expanded before anything is
// decoded, and decoded by this package (not by yaml.Unmarshal) so that every
// problem carries the key's full path and the file and line that set it:
//
//	config/wunder.yaml:14: llm.models.gpt.tool_cal_mode: unknown key (did you mean tool_call_mode?)
//	config/wunder.yaml:3: server.port: must be between 1 and 65535, got 70000
//	WUNDER_PORT: server.port: expected an integer, got "abc"
//
// All problems are returned together, sorted by path ([Problems] lists
// them). Keys the original wunder spelt differently (server.max_active_sessions,
// llm.models.*.enable, observability.monitor_*) still load, with a warning
// ([Config.Warnings]).
//
// Typical use, in cmd/wunder:
//
//	cfg, err := config.Load(config.LoadOptions{Path: flagConfig})
//	if err != nil {
//		return err // one line per problem
//	}
//	for _, w := range cfg.Warnings() {
//		logger.Warn(w)
//	}
//	srv := &http.Server{Addr: cfg.Addr(), ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout()}
//
// docs/configuration.md is the reference for every key; tests check that it
// names every key and that config/wunder.example.yaml loads.
//
// Adding a section: add a struct field with a yaml tag to [Config], its
// defaults to [Default], its checks to validate.go, its rows to
// docs/configuration.md. A type used as a map or list entry gets an
// applyDefaults method in defaults.go; a secret field gets secret:"true".
package config
