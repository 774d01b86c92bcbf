/** An embed API answer that was not 2xx: the spec's error body `{statusCode, message, error}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The embed API of this program, on the widget's own origin. */
export function embedApi(apiBase: string) {
  async function call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${apiBase}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
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
    eligibility: (walletAddress: string) => call<Eligibility>("POST", "/eligibility", { walletAddress }),
    bootstrap: (walletAddress: string) => call<Bootstrap>("POST", "/credit-line/bootstrap", { walletAddress }),
    quote: (input: { walletAddress: string; amount: string; tenureDays: number }) => call<Quote>("POST", "/quote", input),
    accept: (input: AcceptBody) => call<{ loan: Loan }>("POST", "/accept", input),
    loan: (id: string) => call<{ loan: Loan }>("GET", `/loans/${encodeURIComponent(id)}`),
  };
}

export type EmbedApi = ReturnType<typeof embedApi>;
export type Eligibility = { walletAddress: string; eligible: boolean; reasons: { code: string; message: string }[] };
export type Bootstrap = {
  creditLine: { id: string; walletAddress: string; status: string; limit: string; available: string };
  requiresKyc: boolean;
  agreementAccepted: boolean;
};
export type Quote = {
  amount: string;
  tenureDays: number;
  processingFee: string;
  totalDue: string;
  dueAt: string;
  agreementChallenge: { id: string; message: string; expiresAt: string };
};
export type AcceptBody = {
  walletAddress: string;
  amount: string;
  tenureDays: number;
  agreementChallengeId: string;
  walletSignature: string;
  channel: string;
  idempotencyKey: string;
  publicKey?: string;
  timestamp?: number;
  domain?: string;
};
export type Loan = {
  id: string;
  status: string;
  derivedStatus: string;
  principalAmount: string;
  processingFee: string;
  totalDue: string;
  amountDue: string;
  dueAt: string | null;
  fundingState: string | null;
  fundingTxHash: string | null;
  decision: { outcome: string; reasons: { code: string; message: string }[] } | null;
};
