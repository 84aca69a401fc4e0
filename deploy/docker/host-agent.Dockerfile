# A browser host: one host agent, which is one browser slot. The agent starts its own Xvfb
# (AGENT_XVFB) and a fresh Debian Chromium for every browser session (plus one warm spare); run
# as many containers as browsers are wanted. Build from the repository root:
#   docker build -f deploy/docker/host-agent.Dockerfile -t browser-infra/host-agent .
FROM node:24-bookworm-slim

# openssl is for scripts/dev-certs.sh, which docker-compose.yml runs from this image. unshare
# (util-linux, already in the base image) is how the agent finds out whether Chromium's sandbox
# can work here. x11-xkb-utils and xkb-data: AGENT_KEYBOARD_LAYOUT (setxkbmap); libnss3-tools:
# certutil, which puts a session's proxy CA bundle in its browser's NSS database.
RUN apt-get update \
  && apt-get install -y --no-install-recommends \
    chromium fonts-liberation fonts-noto-color-emoji libnss3-tools openssl tini x11-xkb-utils xkb-data xvfb \
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

# How production runs Node (deploy/node-runtime.ts says why; test/e2e/node-runtime.test.ts keeps these
# equal to it): smaller V8 heaps, and a compile cache filled now, so the host-agent never loads Node's
# type stripper (about 24 MB it would keep for its whole life).
ENV NODE_OPTIONS="--max-semi-space-size=2 --max-old-space-size=128" \
    NODE_COMPILE_CACHE=/app/.compile-cache
RUN node packages/host-agent/src/main.ts --version && chown -R node:node /app/.compile-cache

# /home/node/agent-data: the agent's own directory (AGENT_DATA_DIR), wiped at every start, holding
# each browser's profile, downloads, HOME and TMPDIR; it lives in the container's writable layer.
# /tmp/.X11-unix: where Xvfb puts its socket, made here as root so Xvfb need not make it as node.
# /ca, /agent-certs, /gateway-certs: mount points of docker-compose.yml's certificate volumes, owned
# by node so a fresh named volume mounted there is writable by the `certs` one-shot.
RUN mkdir -p /home/node/agent-data /ca /agent-certs /gateway-certs \
  && chown node:node /home/node/agent-data /ca /agent-certs /gateway-certs \
  && chmod 700 /home/node/agent-data /ca \
  && mkdir -p -m 1777 /tmp/.X11-unix
USER node
# No DISPLAY: the agent starts Xvfb on a free display of its own at this size.
#
# Chromium's sandbox: the agent turns it on only when it runs as non-root and an unprivileged user
# namespace can be made (it tries `unshare --user true`), else it runs Chromium with --no-sandbox
# and logs a warning. Docker's default seccomp profile denies user namespaces (unshare and clone
# with CLONE_NEWUSER) to containers without CAP_SYS_ADMIN, so under it the sandbox is off and the
# container itself (its own namespaces, a non-root user without capabilities) is the isolation boundary
# between a web page and the host. To have Chromium's sandbox as well, run the container with a
# seccomp profile that allows user namespaces (security_opt: ["seccomp=<profile>.json"]) on a
# kernel that permits unprivileged ones; never with --privileged or CAP_SYS_ADMIN.
#
# Metrics stay on the agent's default AGENT_METRICS_LISTEN=127.0.0.1:9464, inside the container:
# they have no authentication. For a Prometheus elsewhere, set AGENT_METRICS_LISTEN=0.0.0.0:9464
# and let only Prometheus reach the port (a network of its own, or a firewall; never publish it).
ENV AGENT_XVFB=1920x1080x24 \
    AGENT_CHROMIUM_PATH=/usr/bin/chromium \
    AGENT_DATA_DIR=/home/node/agent-data \
    AGENT_LISTEN=0.0.0.0:50051
# gRPC, and the gateways' liveness probes on the same number over UDP.
EXPOSE 50051 50051/udp
# tini as PID 1 passes SIGTERM to the agent (which stops its browsers and Xvfb and releases any
# held key before it exits) and reaps whatever orphans Chromium leaves behind.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/packages/host-agent/src/main.ts"]
