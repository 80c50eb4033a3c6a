# wunder — the two commands a fresh machine needs are `make run` and `make test`.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
PKGS     := ./...

.PHONY: run build test lint bench bench-load clean

## run: build and start the server on :8000 (SQLite and workspaces under ./data, no config needed)
run:
	CGO_ENABLED=0 $(GO) run -ldflags "$(LDFLAGS)" ./cmd/wunder serve

## build: build bin/wunder (pure Go, no cgo)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/wunder ./cmd/wunder

## test: vet, then every test with the race detector (PostgreSQL tests run when WUNDER_TEST_POSTGRES_DSN is set)
test: lint
	$(GO) test -race -count=1 -timeout 10m $(PKGS)

## lint: gofmt and go vet must be clean
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: the Go benchmarks (loop overhead per round, storage, LLM decoding)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./orchestrator/ ./storage/ ./adapters/llm/

## bench-load: start a fake model and a server in a temp dir, then drive them with `wunder bench`
bench-load: build
	./scripts/bench-load.sh

clean:
	rm -rf bin
