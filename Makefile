# wunder — the two commands a fresh machine needs are `make run` and `make test`.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
PKGS     := ./...

.PHONY: run build test lint bench bench-load clean tools generate proto-check web web-check

## run: build bin/wunder and start the server on 127.0.0.1:8000 (SQLite and workspaces under ./data, no config needed; WUNDER_PORT=9000 for another port)
# bin/wunder is the same binary the README's `./bin/wunder run ...` uses,
# not `go run`. Ctrl-C shuts the server down cleanly and `make run` exits
# 0. On a terminal, Ctrl-C sends SIGINT to the whole foreground process
# group, make included, and make always ends itself by that signal (exit
# 130) however its child exits; so there the server runs as a job of its
# own (set -m) brought to the foreground (fg): Ctrl-C reaches the server
# alone, and make exits with the server's status. Without a terminal
# (CI, a pipe) the server is exec'd, and SIGINT or SIGTERM to it ends it
# the same clean way.
run: build
	@if [ -t 0 ]; then set -m; ./bin/wunder serve & fg %1 >/dev/null; else exec ./bin/wunder serve; fi

## build: build bin/wunder (pure Go, no cgo)
# -v names each package as it compiles: the first build on a fresh machine
# downloads modules and compiles for several minutes, and should say so.
build:
	@[ -x bin/wunder ] || echo "building bin/wunder: the first build downloads the modules and compiles everything, which takes a few minutes; later builds take seconds"
	CGO_ENABLED=0 $(GO) build -v -trimpath -ldflags "$(LDFLAGS)" -o bin/wunder ./cmd/wunder
	@echo "built bin/wunder"

## test: lint, then every test with the race detector (PostgreSQL tests run when WUNDER_TEST_POSTGRES_DSN is set)
# cmd/wunder holds the browser, process and interop tests: about 10 minutes
# under -race on 2 cores, so a package may take 20.
test: lint
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

## lint: gofmt, go vet and staticcheck (pinned, installed into bin/tools) must be clean
lint: staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(TOOLS)/staticcheck $(PKGS)

## staticcheck: install the pinned staticcheck into bin/tools unless that version is already there
# 2026.1 (v0.7.0) is the release that supports Go 1.26; the module proxy here refuses 2026.1.x tags.
# Deliberate uses of deprecated APIs carry a //lint:ignore SA1019 with the reason.
STATICCHECK_VERSION := v0.7.0
.PHONY: staticcheck
staticcheck:
	@$(TOOLS)/staticcheck -version 2>/dev/null | grep -qF '($(STATICCHECK_VERSION))' \
	  || GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## bench: the Go benchmarks (loop overhead per round, storage, LLM decoding)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./orchestrator/ ./storage/ ./adapters/llm/

## bench-load: start a fake model and a server in a temp dir, then drive them with `wunder bench`
bench-load: build
	./scripts/bench-load.sh

## tools: install the pinned code generators into bin/tools (go install; local plugins only)
TOOLS                      := $(CURDIR)/bin/tools
BUF_VERSION                := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_CONNECT_VERSION := v1.21.1
tools:
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) $(GO) install connectrpc.com/connect/cmd/protoc-gen-connect-go@$(PROTOC_GEN_CONNECT_VERSION)

## generate: regenerate gen/ from proto/ (buf.gen.yaml; commit the result)
generate: tools
	PATH="$(TOOLS):$$PATH" buf generate

## proto-check: buf lint, buf breaking against main (when main has the API), and gen/ must be fresh
proto-check: generate
	PATH="$(TOOLS):$$PATH" buf lint
	@if git cat-file -e main:buf.yaml 2>/dev/null; then \
	  PATH="$(TOOLS):$$PATH" buf breaking --against '.git#branch=main'; \
	else echo "buf breaking: main has no buf.yaml yet; skipped"; fi
	@if [ -n "$$(git status --porcelain -- gen)" ]; then \
	  echo "gen/ is stale: run 'make generate' and commit the result"; git status --porcelain -- gen; exit 1; fi

clean:
	rm -rf bin

## deploy-check: validate deploy/kubernetes/ with the pinned kubeconform against the schemas committed
## beside it (no network; regenerate them with scripts/k8s-schemas.py)
KUBECONFORM_VERSION := v0.7.0
.PHONY: deploy-check
deploy-check:
	@$(GO) version -m $(TOOLS)/kubeconform 2>/dev/null | grep -qE 'mod.*kubeconform.*$(KUBECONFORM_VERSION)' \
	  || GOBIN=$(TOOLS) $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)
	$(TOOLS)/kubeconform -strict -summary \
	  -schema-location 'deploy/kubernetes/schemas/{{.ResourceKind}}{{.KindSuffix}}.json' \
	  deploy/kubernetes/*.yaml

.PHONY: ha
## ha: the HA check at full load (scripts/ha.sh): 3 replicas on a fresh PostgreSQL database behind haproxy, kill -9, rolling restart, approval on a killed replica, cancel, MCP session, then throughput with 1, 2 and 3 replicas; needs haproxy and PostgreSQL (HA_PG). HA_USERS, HA_RUNS scale it
ha: build
	HA_USERS=$${HA_USERS:-20} HA_RUNS=$${HA_RUNS:-400} HA_SCALE=$${HA_SCALE:-1} ./scripts/ha.sh

.PHONY: faults
## faults: the fault suite, verbose: kill -9 during a model call and a running tool, model faults, and (restarting the local cluster) PostgreSQL restarted mid-run; PostgreSQL parts need WUNDER_TEST_POSTGRES_DSN. All but the restart also run in `make test`
faults:
	WUNDER_FAULTS_PG_RESTART=1 $(GO) test -count=1 -race -run 'TestFault' -v ./cmd/wunder/

.PHONY: conformance
## conformance: the official MCP conformance suite through the pass-through route and on /wunder/mcp (npm peers in testdata/mcp; also part of `make test`)
conformance:
	$(GO) test -count=1 -run 'Conformance' -v ./mcpserver/ ./cmd/mcpconformanceclient/

.PHONY: mcp-conformance
## mcp-conformance: the MCP conformance suite's main branch built from source (SRC, default /tmp/conformance, a checkout of github.com/modelcontextprotocol/conformance) against the go-sdk everything-server, stateless and stateful, direct and through /wunder/mcp/{server}, at --requirements 2026-07-28 and 2025-11-25
mcp-conformance:
	./scripts/mcp-conformance.sh

.PHONY: a2a-tck
## a2a-tck: the A2A TCK from its source (SRC, a checkout of github.com/a2aproject/a2a-tck branch 1.0-dev; SRC03, optional, branch 0.3.x) against wunder on JSON-RPC, HTTP+JSON and gRPC, and the 0.3 mandatory suite, one line each; skipped without SRC or without the Python modules the TCK imports (REQUIRE=1 fails instead)
a2a-tck:
	./scripts/a2a-tck.sh

## web: rebuild the web console (web/ -> gateway/webui/dist, embedded and committed; needs Node 20 and npm)
web:
	cd web && npm ci --no-audit --no-fund && npm run build

## web-check: the committed console build must be what web/ builds (CI; run after `npm ci` in web/)
web-check:
	cd web && npm run build
	@if [ -n "$$(git status --porcelain -- gateway/webui/dist)" ]; then \
	  echo "gateway/webui/dist is stale: run 'make web' and commit the result"; git status --porcelain -- gateway/webui/dist; exit 1; fi
