/**
 * The dashboard's only way to the service: `/v1` on this origin, the same
 * routes, validation and errors as any integration (the dashboard never
 * re-implements a rule). The session's token lives in this module's memory
 * only: never in localStorage, sessionStorage or a cookie, so no request
 * carries an ambient credential (a cross-site form or script cannot act for
 * the merchant) and closing the tab ends the session.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: string[],
  ) {
    super(messages.join("; "));
  }

  /** The messages naming `field` (`"tenures: …"` → for field "tenures"), without the field prefix. */
  forField(field: string): string[] {
    return this.messages.filter((m) => m.startsWith(`${field}:`) || m.startsWith(`${field}.`)).map((m) => m.replace(/^[^:]+:\s*/, ""));
  }
}

let token: string | null = null;
let onExpired: (() => void) | null = null;

export const session = {
  get token() {
    return token;
  },
  set(next: string | null) {
    token = next;
  },
  /** Called once when the API answers 401 to a signed-in request: the session expired or was revoked. */
  onExpired(handler: () => void) {
    onExpired = handler;
  },
};

/** The seconds until the token's `exp`, or null when it has none readable. */
export function secondsLeft(jwt: string): number | null {
  try {
    const payload = JSON.parse(atob(jwt.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))) as { exp?: number };
    return typeof payload.exp === "number" ? payload.exp - Date.now() / 1000 : null;
  } catch {
    return null;
  }
}

/** One API call: JSON in and out; a non-2xx answer throws ApiError with the API's messages. */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  const signedIn = token !== null;
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit" });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : null;
  if (!res.ok) {
    const raw = (json as { message?: string | string[] } | null)?.message ?? `The service answered ${res.status}`;
    if (res.status === 401 && signedIn) {
      token = null;
      onExpired?.();
    }
    throw new ApiError(res.status, Array.isArray(raw) ? raw : [raw]);
  }
  return json as T;
}

export const get = <T = unknown>(path: string) => api<T>("GET", path);
export const post = <T = unknown>(path: string, body?: unknown) => api<T>("POST", path, body ?? {});
export const put = <T = unknown>(path: string, body: unknown) => api<T>("PUT", path, body);
export const patch = <T = unknown>(path: string, body: unknown) => api<T>("PATCH", path, body);
export const del = <T = unknown>(path: string) => api<T>("DELETE", path);
