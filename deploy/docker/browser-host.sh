#!/bin/sh
# Entry point of the browser host image: Xvfb, then Chromium on it, then the host agent in the
# foreground (it gets the container's signals through tini).
set -eu
app=$(cd "$(dirname "$0")/../.." && pwd)

display_number=${DISPLAY#:}
Xvfb "$DISPLAY" -screen 0 "$SCREEN" -nolisten tcp -noreset &
i=0
until [ -S "/tmp/.X11-unix/X$display_number" ]; do
  i=$((i + 1))
  if [ "$i" -gt 100 ]; then
    echo "browser-host: Xvfb did not start on $DISPLAY" >&2
    exit 1
  fi
  sleep 0.1
done

# Chromium's own sandbox needs user namespaces, which Docker's default seccomp profile denies; the
# container is the sandbox here. Set CHROMIUM_FLAGS to change the flags.
# shellcheck disable=SC2086 # CHROMIUM_FLAGS is a list of flags
chromium ${CHROMIUM_FLAGS:---no-sandbox --disable-dev-shm-usage --no-first-run --no-default-browser-check} \
  --user-data-dir="$HOME/.config/chromium" --remote-debugging-port=9222 \
  --window-position=0,0 --start-maximized about:blank >/dev/null 2>&1 &

# Describe reports Chromium's DevTools URL; it is known only once Chromium listens.
if [ -z "${AGENT_CDP_WS_URL:-}" ]; then
  AGENT_CDP_WS_URL=$(node -e '
    const deadline = Date.now() + 30_000;
    const poll = () =>
      fetch("http://127.0.0.1:9222/json/version")
        .then((r) => r.json())
        .then((v) => console.log(v.webSocketDebuggerUrl))
        .catch(() => (Date.now() < deadline ? setTimeout(poll, 200) : process.exit(1)));
    poll();
  ') || echo "browser-host: Chromium's DevTools did not answer; starting the agent without AGENT_CDP_WS_URL" >&2
  export AGENT_CDP_WS_URL
fi

exec node "$app/packages/host-agent/src/main.ts"
