/**
 * The largest CDP message carried on any leg (client, gateway, agent, Chromium). Playwright's own
 * DevTools client accepts up to 256 MiB: a full-page screenshot of a long page is tens of MiB of
 * base64, beyond gRPC's default limit of 4 MiB and ws's of 100 MiB.
 */
export const MAX_CDP_MESSAGE_BYTES = 256 * 1024 * 1024;

/** gRPC's limit for a received message: one CDP message and its envelope. */
export const MAX_GRPC_MESSAGE_BYTES = MAX_CDP_MESSAGE_BYTES + 1024;
