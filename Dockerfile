# syntax=docker/dockerfile:1
# wunder: a static binary on Debian slim with bubblewrap for the command
# sandbox. Build: docker build -t wunder . ; run: see docs/operations.md.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/wunder ./cmd/wunder

FROM debian:bookworm-slim
# bubblewrap: execute_command and ptc run in it (sandbox.mode: bwrap).
# python3 and git: commands the default allowlist offers the model.
# ca-certificates: HTTPS to models, MCP servers and A2A peers.
# poppler-utils: pdftotext reads PDF attachments (docs/attachments.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates python3 git tini poppler-utils \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 wunder \
 && useradd --system --uid 10001 --gid wunder --home-dir /var/lib/wunder --create-home wunder
COPY --from=build /out/wunder /usr/local/bin/wunder
# The shipped skills (skills/ in the repository). skills.paths defaults to
# <data dir>/skills (uploads, in the volume) and skills relative to the
# working directory: this one, outside the volume, so a mounted volume
# does not hide them and an image upgrade brings their new versions.
COPY --chown=root:root skills /usr/share/wunder/skills

# Listen on every interface inside the container. The server refuses to
# start that way without WUNDER_API_KEY (or security.allow_unauthenticated).
ENV WUNDER_HOST=0.0.0.0 \
    WUNDER_PORT=8000 \
    WUNDER_DATA_DIR=/var/lib/wunder
USER 10001:10001
WORKDIR /usr/share/wunder
VOLUME ["/var/lib/wunder"]
EXPOSE 8000
# The shell form, so the port is the one the server listens on, also when
# `docker run -e WUNDER_PORT=…` changes it.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD wunder health --server "http://127.0.0.1:${WUNDER_PORT:-8000}"
ENTRYPOINT ["tini", "--", "wunder"]
CMD ["serve"]
