/**
 * The one error vocabulary of the service. Domain code throws these; the
 * workers map them to SPEC.md's `{ statusCode, message, error }` in one place
 * (`toErrorBody`).
 */
export const ERROR_KINDS = {
  VALIDATION: { status: 400, name: "Bad Request" },
  BUSINESS_RULE: { status: 400, name: "Bad Request" },
  UNAUTHORIZED: { status: 401, name: "Unauthorized" },
  FORBIDDEN: { status: 403, name: "Forbidden" },
  NOT_FOUND: { status: 404, name: "Not Found" },
  METHOD_NOT_ALLOWED: { status: 405, name: "Method Not Allowed" },
  CONFLICT: { status: 409, name: "Conflict" },
  PAYLOAD_TOO_LARGE: { status: 413, name: "Payload Too Large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, name: "Unsupported Media Type" },
  RATE_LIMITED: { status: 429, name: "Too Many Requests" },
  INTERNAL: { status: 500, name: "Internal Server Error" },
  /** A dependency outside the service (e.g. a chain's RPC) cannot be reached: retry later. */
  UNAVAILABLE: { status: 503, name: "Service Unavailable" },
} as const;

export type ErrorKind = keyof typeof ERROR_KINDS;

export type ErrorBody = {
  statusCode: number;
  message: string | string[];
  error: string;
};

export class DomainError extends Error {
  readonly kind: ErrorKind;
  /** A string, or one string per bad field for validation failures. */
  readonly detail: string | string[];
  /** Extra response headers (e.g. `Retry-After`, `Allow`). */
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKind, detail: string | string[], headers: Record<string, string> = {}) {
    super(Array.isArray(detail) ? detail.join("; ") : detail);
    this.name = `DomainError(${kind})`;
    this.kind = kind;
    this.detail = detail;
    this.headers = headers;
  }

  get status(): number {
    return ERROR_KINDS[this.kind].status;
  }
}

export const validationError = (fields: string[]) => new DomainError("VALIDATION", fields);
export const businessRule = (message: string) => new DomainError("BUSINESS_RULE", message);
export const unauthorized = (message = "Missing or invalid credentials") => new DomainError("UNAUTHORIZED", message);
export const forbidden = (message = "You are not permitted to perform this action") => new DomainError("FORBIDDEN", message);
export const notFound = (what: string) => new DomainError("NOT_FOUND", `${what} not found`);
export const conflict = (message: string) => new DomainError("CONFLICT", message);
export const unavailable = (message: string, retryAfterSeconds = 30) => new DomainError("UNAVAILABLE", message, { "Retry-After": String(retryAfterSeconds) });
export const rateLimited = (retryAfterSeconds: number) =>
  new DomainError("RATE_LIMITED", "Too many requests; retry later", {
    "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

/** Maps any error kind to the spec's body. Never includes internals of unexpected errors. */
export function toErrorBody(err: DomainError): ErrorBody {
  const { status, name } = ERROR_KINDS[err.kind];
  return { statusCode: status, message: err.detail, error: name };
}

/** The body for a status that did not come from a DomainError (e.g. a framework 404). */
export function errorBodyForStatus(status: number, message: string | string[]): ErrorBody {
  const kind = (Object.keys(ERROR_KINDS) as ErrorKind[]).find((k) => ERROR_KINDS[k].status === status);
  return { statusCode: status, message, error: kind ? ERROR_KINDS[kind].name : "Error" };
}
