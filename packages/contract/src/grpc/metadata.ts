/** Metadata key that carries the HTTP request id to the host agent's logs. */
export const REQUEST_ID_KEY = "x-request-id";
