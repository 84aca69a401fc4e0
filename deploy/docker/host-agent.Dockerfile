# A browser host: Xvfb, Chromium from Debian and the host agent in one container. Build from the
# repository root:
#   docker build -f deploy/docker/host-agent.Dockerfile -t browser-infra/host-agent .
FROM node:24-bookworm-slim

# openssl is for scripts/dev-certs.sh, which docker-compose.yml runs from this image.
RUN apt-get update \
  && apt-get install -y --no-install-recommends \
    chromium fonts-liberation fonts-noto-color-emoji openssl tini xvfb \
  && rm -rf /var/lib/apt/lists/*

ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json .npmrc ./
COPY packages/contract/package.json packages/contract/
COPY packages/keysyms/package.json packages/keysyms/
COPY packages/host-agent/package.json packages/host-agent/
COPY packages/gateway/package.json packages/gateway/
RUN npm install --omit=dev --workspace @browser-infra/host-agent --no-audit --no-fund && npm cache clean --force

COPY packages/contract/src packages/contract/src
COPY packages/keysyms/src packages/keysyms/src
COPY packages/host-agent/src packages/host-agent/src
COPY scripts/dev-certs.sh scripts/dev-certs.sh
COPY deploy/docker/browser-host.sh deploy/docker/browser-host.sh

# How production runs Node (deploy/node-runtime.ts says why; test/e2e/node-runtime.test.ts keeps these
# equal to it): smaller V8 heaps, and a compile cache filled now, so the host-agent never loads Node's
# type stripper (about 24 MB it would keep for its whole life).
ENV NODE_OPTIONS="--max-semi-space-size=2 --max-old-space-size=128" \
    NODE_COMPILE_CACHE=/app/.compile-cache
RUN node packages/host-agent/src/main.ts --version && chown -R node:node /app/.compile-cache

# /certs belongs to the unprivileged user so a fresh named volume mounted there is writable by it.
RUN mkdir -p /certs /home/node/Downloads && chown node:node /certs /home/node/Downloads
USER node
ENV DISPLAY=:99 \
    SCREEN=1920x1080x24 \
    AGENT_LISTEN=0.0.0.0:50051 \
    AGENT_METRICS_LISTEN=0.0.0.0:9464
EXPOSE 50051 9464
# tini as PID 1 reaps Xvfb and Chromium helpers and passes SIGTERM to the agent, which then
# releases any held key before it exits.
ENTRYPOINT ["/usr/bin/tini", "--", "/app/deploy/docker/browser-host.sh"]
