# The gateway: the public HTTP API. Build from the repository root:
#   docker build -f deploy/docker/gateway.Dockerfile -t browser-infra/gateway .
FROM node:24-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

# Manifests first: the dependency layer is rebuilt only when they change. npm needs every
# workspace's manifest to read the lockfile, but installs only this workspace's runtime dependencies.
# `npm install`, not `npm ci`: the lock file was made where Biome's and buf's other-platform binaries
# cannot be fetched, and npm 11's strict ci check refuses it; install still keeps the locked versions.
COPY package.json package-lock.json .npmrc ./
COPY packages/contract/package.json packages/contract/
COPY packages/keysyms/package.json packages/keysyms/
COPY packages/host-agent/package.json packages/host-agent/
COPY packages/gateway/package.json packages/gateway/
RUN npm install --omit=dev --workspace @browser-infra/gateway --no-audit --no-fund && npm cache clean --force

# Node 24 runs the TypeScript sources as they are (type stripping): there is no build step.
COPY packages/contract/src packages/contract/src
COPY packages/keysyms/src packages/keysyms/src
COPY packages/gateway/src packages/gateway/src

# How production runs Node (deploy/node-runtime.ts says why; test/e2e/node-runtime.test.ts keeps these
# equal to it): smaller V8 heaps, and a compile cache filled now, so the gateway never loads Node's
# type stripper (about 24 MB it would keep for its whole life).
ENV NODE_OPTIONS="--max-semi-space-size=2 --max-old-space-size=256" \
    NODE_COMPILE_CACHE=/app/.compile-cache
RUN node packages/gateway/src/main.ts --version && chown -R node:node /app/.compile-cache

# SQLite lives here when DATABASE_URL is unset; with PostgreSQL it only holds nothing. 0700: the
# gateway makes it so at start anyway (it holds the store and the secrets key).
RUN mkdir -p /var/lib/browser-infra && chown node:node /var/lib/browser-infra && chmod 700 /var/lib/browser-infra
USER node
# GET /metrics answers only loopback clients, so here only a client inside the container:
# METRICS_PUBLIC=true opens it to whoever reaches PORT (then block /metrics at the load balancer).
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/browser-infra
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "packages/gateway/src/main.ts"]
