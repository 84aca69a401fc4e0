import { z } from "zod";

/**
 * The error table: every error the API answers with, its HTTP status, and
 * whether the official client may retry it. Domain code throws ApiError with
 * one of these codes; the HTTP layer turns it into the Error body.
 */
export const ERROR_TABLE = {
  invalid_request: { status: 400, retry: false },
  bad_request: { status: 400, retry: false },
  unauthorized: { status: 401, retry: false },
  forbidden: { status: 403, retry: false },
  not_found: { status: 404, retry: false },
  method_not_allowed: { status: 405, retry: false },
  conflict: { status: 409, retry: false },
  too_many_requests: { status: 429, retry: true },
  request_timeout: { status: 408, retry: true },
  payload_too_large: { status: 413, retry: false },
  expectation_failed: { status: 417, retry: false },
  headers_too_large: { status: 431, retry: false },
  internal_error: { status: 500, retry: false },
  host_unavailable: { status: 502, retry: true },
  store_unavailable: { status: 503, retry: true },
  display_unavailable: { status: 503, retry: false },
  no_host_available: { status: 503, retry: true },
  host_timeout: { status: 504, retry: true },
  insufficient_storage: { status: 507, retry: false },
} as const satisfies Record<string, { status: number; retry: boolean }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** Spec part 7. */
export const ErrorDetailBody = z.object({
  code: z.string().optional().describe("Lower-level, more specific code"),
  message: z.string().optional().describe("Further detail"),
});
export type ErrorDetail = z.infer<typeof ErrorDetailBody>;

export const ErrorBody = z.object({
  code: z.string().describe(`Machine-readable error code: ${Object.keys(ERROR_TABLE).join(", ")}`),
  message: z.string().describe("Human-readable description for debugging"),
  details: z.array(ErrorDetailBody).optional().describe("Additional details when there are several errors"),
  inner_error: ErrorDetailBody.optional().describe("A lower-level error"),
});

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly innerError: ErrorDetail | undefined;
  /** Overrides the table, e.g. a press_key that may have reached the host must not be retried. */
  readonly retry: boolean;
  /** Sent as Retry-After. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      details?: ErrorDetail[];
      innerError?: ErrorDetail;
      retry?: boolean;
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ApiError";
    this.code = code;
    this.details = options.details;
    this.innerError = options.innerError;
    this.retry = options.retry ?? ERROR_TABLE[code].retry;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }
}

/** Enough to fix a request by; a body with thousands of bad items must not get a reply its size. */
export const MAX_REPORTED_PROBLEMS = 20;

/**
 * A 400 bad_request with one invalid_input detail per problem ("<field>: <what is wrong>"): the
 * first MAX_REPORTED_PROBLEMS, then how many more there are.
 */
export function invalidInput(problems: string[]): ApiError {
  const shown =
    problems.length > MAX_REPORTED_PROBLEMS
      ? [...problems.slice(0, MAX_REPORTED_PROBLEMS), `and ${problems.length - MAX_REPORTED_PROBLEMS} more problems`]
      : problems;
  return new ApiError("bad_request", shown.length === 1 ? (shown[0] as string) : "invalid input", {
    details: shown.map((message) => ({ code: "invalid_input", message })),
  });
}

export function notFound(what: string): ApiError {
  return new ApiError("not_found", `${what} not found`);
}
