import { get } from "../api.ts";

/** `GET /v1/stats/today`: the day's numbers of one mode. */
export type TodayStats = {
  mode: "sandbox" | "live";
  from: string;
  to: string;
  created: number;
  funded: number;
  repaid: number;
  overdue: number;
  defaulted: number;
  declined: number;
  awaitingReview: number;
  amounts: { stablecoin: string; lent: string; outstanding: string }[];
};

/** The fields of `GET /v1/go-live` Home reads. */
export type GoLiveSummary = {
  certifiedAt: string | null;
  nextStep: string | null;
  steps: { step: number; key: string; title: string; status: string; detail: string }[];
};

export type Warning = { type: string; title: string; createdAt: string; detail: string | null };

type EventEnvelope = { id: string; type: string; createdAt: string; data: Record<string, unknown> };

/** The events Home warns about, with the titles the notifications give them. */
const WARNINGS: Record<string, string> = {
  "liquidity.low": "Liquidity is running low",
  "liquidity.unavailable": "Liquidity unavailable for a draw",
  "wallet.gas_low": "Gas wallet running low",
};
/** A warning older than this is history, not something to act on now (the Notifications page keeps it). */
const RECENT_MS = 7 * 86_400_000;
/** Unread notifications are counted from one page; beyond it Home says "at least" (a count is not worth a page walk). */
export const UNREAD_PAGE = 100;

export async function unreadCount(mode: string): Promise<{ count: number; atLeast: boolean }> {
  const page = await get<{ data: unknown[]; nextCursor: string | null }>(`/notifications?unread=true&limit=${UNREAD_PAGE}&mode=${mode}`);
  return { count: page.data.length, atLeast: page.nextCursor !== null };
}

/**
 * The newest liquidity and gas warnings of the last 7 days in `mode`: one
 * bounded read per type (the 5 newest each), since `GET /v1/events` filters
 * by one type.
 */
export async function recentWarnings(mode: string): Promise<Warning[]> {
  const pages = await Promise.all(
    Object.keys(WARNINGS).map((type) => get<{ data: EventEnvelope[] }>(`/events?type=${encodeURIComponent(type)}&limit=5&mode=${mode}`)),
  );
  const since = Date.now() - RECENT_MS;
  return pages
    .flatMap((p) => p.data)
    .filter((e) => Date.parse(e.createdAt) >= since)
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
    .map((e) => ({ type: e.type, title: WARNINGS[e.type] ?? e.type, createdAt: e.createdAt, detail: detailOf(e) }));
}

function detailOf(e: EventEnvelope): string | null {
  const wallet = e.data.wallet as { chain?: string; address?: string; nativeBalance?: string | null; gasThreshold?: string | null } | undefined;
  if (wallet?.address) return `${wallet.chain ?? ""} ${wallet.address}: ${wallet.nativeBalance ?? "?"} left, threshold ${wallet.gasThreshold ?? "?"}`;
  const pool = e.data.pool as { available?: string; reserved?: string; stablecoin?: string } | null | undefined;
  if (pool?.available !== undefined) return `Pool: ${pool.available} ${pool.stablecoin ?? ""} available, ${pool.reserved ?? "?"} reserved`;
  return null;
}
