# syntax=docker/dockerfile:1

# Build: install every dependency, compile TypeScript, then keep production dependencies only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# No toolchain: the native modules (better-sqlite3, koffi, fs-native-extensions) ship prebuilt
# binaries for linux-x64 and linux-arm64 glibc inside their npm packages, so `npm ci` compiles nothing.
COPY package.json package-lock.json ./
# npm ci runs it first (preinstall): it refuses a Node the service does not support.
COPY scripts/check-node.mjs ./scripts/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY routes ./routes
RUN npm run build && npm prune --omit=dev

# Run: Node 24 LTS, the compiled service, production dependencies, as the unprivileged `node` user.
FROM node:24-bookworm-slim
# bubblewrap is run_command's sandbox; without it (or without user namespaces in the
# container) the service starts anyway, logs why, and offers no run_command. util-linux's
# setpriv (part of the base image) starts commands as an unprivileged user when the service
# is root. The agent home lock is an fcntl lock taken in-process (fs-native-extensions ships
# a prebuilt glibc addon, so `npm ci` compiles nothing for it).
# tini is PID 1: it forwards SIGTERM to Node and reaps the MCP servers and mcporter
# processes that tools start, so none is left a zombie.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap tini \
 && rm -rf /var/lib/apt/lists/*
# A user of its own for commands, for deployments that run the service as root
# (`--user root -e SANDBOX_UID=10001 -e SANDBOX_GID=10001`). As the default `node` user the
# service runs commands as itself, which is unprivileged already; leave SANDBOX_UID unset then.
RUN groupadd --system --gid 10001 turn-sandbox \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin turn-sandbox
WORKDIR /app
# HOST=0.0.0.0 needs API_TOKEN (or ALLOW_UNAUTHENTICATED=true): the service refuses to start
# open to the network without one (exit 78). SHUTDOWN_GRACE_MS=7000 lets running turns finish,
# the rest cancel and the store close within `docker stop`'s default 10 s; with
# `docker run --stop-timeout N`, set SHUTDOWN_GRACE_MS to about (N - 3) * 1000.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    SHUTDOWN_GRACE_MS=7000
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The turn inspector's static pages (GET /ui), served as they are.
COPY ui ./ui
# 0711: the sandbox user passes through to the agent homes but cannot list the data folder.
RUN mkdir -p /data && chown node:node /data && chmod 0711 /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Asks the port the service really listens on (PORT may be changed at `docker run -e PORT=…`).
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || '8080') + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node handles SIGTERM (close-with-grace): it stops taking turns, lets running ones finish
# within SHUTDOWN_GRACE_MS, cancels the rest, and exits.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/server.js"]
