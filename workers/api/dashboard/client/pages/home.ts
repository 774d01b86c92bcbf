import { get } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection, utcDate, when } from "../dom.ts";
import { type GoLiveSummary, recentWarnings, type TodayStats, unreadCount, UNREAD_PAGE, type Warning } from "../home/home-data.ts";

/**
 * Home: what to do next (the go-live checklist's next step, unread
 * notifications, loans awaiting review, liquidity and gas warnings), then the
 * day's numbers of the mode the dashboard looks at. Every count is the API's:
 * the day's numbers come from one aggregate (`GET /v1/stats/today`), the
 * unread count from one bounded page.
 */
export const homePage: Page = {
  path: "/",
  title: "Home",
  nav: "Home",
  render: async (ctx) => {
    const [goLive, stats, unread, warnings] = await Promise.all([
      get<GoLiveSummary>("/go-live"),
      get<TodayStats>(`/stats/today?mode=${ctx.mode}`),
      unreadCount(ctx.mode),
      recentWarnings(ctx.mode),
    ]);
    return pageSection("Home", nextThings(ctx, goLive, stats, unread, warnings), todaysNumbers(ctx, stats));
  },
};

const link = (href: string, text: string) => el("a", { href: `/dashboard${href}`, "data-link": true }, text);

function nextThings(ctx: Ctx, goLive: GoLiveSummary, stats: TodayStats, unread: { count: number; atLeast: boolean }, warnings: Warning[]): HTMLElement {
  const next = goLive.steps.find((s) => s.key === goLive.nextStep);
  const items: HTMLElement[] = [];
  if (next)
    items.push(
      el(
        "li",
        { class: "next-step", "data-step": next.key },
        el("strong", {}, `Go live, step ${next.step} of ${goLive.steps.length}: ${next.title}. `),
        next.detail,
        " ",
        link("/go-live", "Open the checklist"),
      ),
    );
  else if (goLive.certifiedAt && ctx.mode === "sandbox")
    items.push(el("li", {}, `You are certified for live since ${when(goLive.certifiedAt)}. `, "Switch to Live above to see live loans."));
  const unreadText =
    unread.count === 0
      ? "No unread notifications."
      : `${unread.atLeast ? `At least ${UNREAD_PAGE}` : unread.count} unread notification${unread.count === 1 ? "" : "s"}.`;
  items.push(el("li", { "data-item": "unread" }, `${unreadText} `, link("/notifications", "Notifications")));
  const reviewText =
    stats.awaitingReview === 0 ? "No loans awaiting review." : `${stats.awaitingReview} loan${stats.awaitingReview === 1 ? "" : "s"} awaiting review.`;
  items.push(el("li", { "data-item": "review" }, `${reviewText} `, link("/review", "Review queue")));
  return el(
    "section",
    { "aria-labelledby": "next-title" },
    el("h2", { id: "next-title" }, "What to do next"),
    el("ul", { class: "todo" }, ...items),
    warnings.length === 0
      ? el("p", { class: "empty", "data-item": "warnings" }, "No liquidity or gas warnings in the last 7 days.")
      : el(
          "div",
          { class: "banner", role: "region", "aria-label": "Warnings", "data-item": "warnings" },
          el(
            "ul",
            {},
            ...warnings.map((w) =>
              el(
                "li",
                { "data-type": w.type },
                el("strong", {}, w.title),
                ` (${when(w.createdAt)})`,
                w.detail ? `: ${w.detail}. ` : ". ",
                w.type === "wallet.gas_low" ? link("/go-live", "Wallets") : link("/notifications", "Details"),
              ),
            ),
          ),
        ),
  );
}

function todaysNumbers(ctx: Ctx, stats: TodayStats): HTMLElement {
  const card = (label: string, value: string | number, key: string) =>
    el("div", { class: "card", "data-stat": key }, el("p", { class: "value" }, value), el("p", { class: "label" }, label));
  const counts: [string, keyof TodayStats][] = [
    ["Loans created", "created"],
    ["Funded", "funded"],
    ["Repaid", "repaid"],
    ["Overdue", "overdue"],
    ["Defaulted", "defaulted"],
  ];
  const amounts = stats.amounts.length > 0 ? stats.amounts : [{ stablecoin: "", lent: "0", outstanding: "0" }];
  return el(
    "section",
    { "aria-labelledby": "today-title" },
    el("h2", { id: "today-title" }, `Today in ${ctx.mode === "live" ? "live" : "sandbox"}`),
    el("p", { class: "hint" }, `Since ${utcDate(stats.from)}, 00:00 UTC${ctx.mode === "sandbox" ? " on the sandbox clock" : ""}.`),
    el(
      "div",
      { class: "cards" },
      ...counts.map(([label, key]) => card(label, stats[key] as number, key)),
      ...amounts.flatMap((a) => [
        card(`Lent today${a.stablecoin ? ` (${a.stablecoin})` : ""}`, money(a.lent), `lent${a.stablecoin}`),
        card(`Outstanding${a.stablecoin ? ` (${a.stablecoin})` : ""}`, money(a.outstanding), `outstanding${a.stablecoin}`),
      ]),
    ),
  );
}

/** "1250.500000" → "1,250.50": the API's decimal string with thousands separators, to the cent unless it has more (no floating point). */
function money(amount: string): string {
  const [whole = "0", fraction = ""] = amount.split(".");
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${fraction.replace(/0+$/, "").padEnd(2, "0")}`;
}
