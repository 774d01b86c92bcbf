// Type-only: the server's own schemas type every call, so a field the widget reads that the
// server does not send (or a value it cannot take) is a compile error. Nothing of them is bundled.
import type {
  AcceptBody,
  Bootstrap,
  Eligibility,
  EmbedLoan,
  EmbedLoanResponse,
  OpenWalletSessionBody,
  Quote,
  QuoteBody,
  WalletSession,
  WalletSessionChallenge,
} from "../routes/schemas.ts";

export type { AcceptBody, Bootstrap, Eligibility, Quote };
export type Loan = EmbedLoan;

/** An embed API answer that was not 2xx: the spec's error body `{statusCode, message, error}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The header that carries the wallet session (POST …/wallet-session). */
const SESSION_HEADER = "x-svc-wallet-session";

/**
 * The embed API of this program, on the widget's own origin. Once a wallet
 * session is open, the calls that describe the wallet's credit (eligibility,
 * bootstrap, quote) carry it, so they answer with the wallet's own loans.
 */
export function embedApi(apiBase: string) {
  let session: string | null = null;
  async function call<T>(method: "GET" | "POST", path: string, body?: unknown, withSession = false): Promise<T> {
    const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
    if (withSession && session) headers[SESSION_HEADER] = session;
    const res = await fetch(`${apiBase}${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      credentials: "omit",
    });
    const json = (await res.json().catch(() => null)) as (T & { message?: string | string[] }) | null;
    if (!res.ok) {
      const message = json?.message ?? `The service answered ${res.status}`;
      throw new ApiError(res.status, Array.isArray(message) ? message.join("; ") : message);
    }
    return json as T;
  }
  return {
    sessionChallenge: (walletAddress: string) => call<WalletSessionChallenge>("POST", "/wallet-session/challenge", { walletAddress }),
    async openSession(body: OpenWalletSessionBody): Promise<WalletSession> {
      const opened = await call<WalletSession>("POST", "/wallet-session", body);
      session = opened.token;
      return opened;
    },
    eligibility: (walletAddress: string) => call<Eligibility>("POST", "/eligibility", { walletAddress }, true),
    bootstrap: (walletAddress: string) => call<Bootstrap>("POST", "/credit-line/bootstrap", { walletAddress }, true),
    quote: (input: QuoteBody) => call<Quote>("POST", "/quote", input, true),
    accept: (input: AcceptBody) => call<EmbedLoanResponse>("POST", "/accept", input),
    loan: (id: string) => call<EmbedLoanResponse>("GET", `/loans/${encodeURIComponent(id)}`),
  };
}

export type EmbedApi = ReturnType<typeof embedApi>;
