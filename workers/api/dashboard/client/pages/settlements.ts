import { displayText } from "../../../../../shared/domain/plain-text.ts";
import { ApiError, get } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection, table, when } from "../dom.ts";
import { field, form, input, showError } from "../forms.ts";
import { attributeForm } from "../loans/attribute-form.ts";
import { loanLink, txLink } from "../loans/loan-bits.ts";
import { pager, queryString } from "../loans/pager.ts";
import type { ListPage, Loan, Settlement, Unmatched } from "../loans/types.ts";

/** How many of the latest loans the recent history reads (one `GET /v1/settlements/:loanId` each: the API has no tenant-wide list). */
const RECENT_LOANS = 10;

/**
 * Settlements: the money movements of the latest loans (or of one loan by
 * id), with their transactions, and the payments the settlement listener
 * could not match, each attributable to a loan by an Owner/Admin.
 */
export const settlementsPage: Page = {
  path: "/settlements",
  title: "Settlements",
  nav: "Settlements",
  async render(ctx: Ctx) {
    const loanId = ctx.query.get("loanId") ?? "";
    const openOnly = ctx.query.get("open") !== "false";
    const lookup = form(
      { label: "Settlements of a loan", submit: "Show" },
      [field("loanId", "Loan id", input({ value: loanId, autocomplete: "off", spellcheck: "false" }))],
      async (data) => {
        ctx.navigate(`/settlements${queryString({ loanId: String(data.get("loanId") ?? "").trim() })}`);
      },
    );
    const [history, unmatched] = await Promise.all([
      historyRows(ctx, loanId).catch((error: unknown) => {
        if (!(error instanceof ApiError) || (error.status !== 404 && error.status !== 400)) throw error;
        showError(lookup, new ApiError(error.status, [`loanId: ${error.status === 404 ? "no loan of yours has this id" : error.messages.join(" ")}`]));
        return [];
      }),
      get<ListPage<Unmatched>>(
        `/settlements/unmatched${queryString({ mode: ctx.mode, open: openOnly ? "true" : null, limit: "20", cursor: ctx.query.get("cursor") })}`,
      ),
    ]);
    return pageSection(
      "Settlements",
      lookup,
      el("h2", {}, loanId ? "Settlements of the loan" : "Recent settlements"),
      table(
        loanId ? `Money movements of loan ${loanId}, oldest first` : `Money movements of the latest ${RECENT_LOANS} ${ctx.mode} loans, newest first`,
        ["Loan", "Kind", "Status", "Amount", "Transaction", "When"],
        history.map(({ loan, s }) => [loanLink({ id: loan }), s.kind, s.status, `${s.amount} ${s.asset}`, txLink(s.chain, s.txHash), when(s.createdAt)]),
        "No money has moved yet.",
      ),
      el("h2", {}, "Unmatched payments"),
      el(
        "p",
        {},
        "Payments received that could not be applied to a loan (a wrong or missing comment, a loan already repaid). They are kept, never dropped. ",
        el(
          "a",
          { href: `/dashboard/settlements${queryString({ open: openOnly ? "false" : null })}` },
          openOnly ? "Show attributed ones too" : "Show open ones only",
        ),
      ),
      table(
        openOnly ? "Unmatched payments not attributed yet, newest first" : "Unmatched payments, newest first",
        ["Received", "Chain", "Amount", "From", "Transaction", "Reason", ctx.canWrite ? "Attribution" : "Attributed to"],
        unmatched.data.map((u) => [
          when(u.createdAt),
          u.chain,
          // In its own asset: 3 TON must not read like 3.00 USDT; another token's amount is in its base units.
          u.asset ? `${u.amount} ${u.asset}` : el("span", {}, `${u.amount} base units of the token `, el("span", { class: "mono" }, u.token)),
          el("span", { class: "mono" }, u.from),
          txLink(u.chain, u.txHash),
          // The comment is anyone's text (a transfer to the COLLECTIONS wallet): flattened, cut short, and set apart from the service's reason.
          u.comment ? el("span", {}, u.reason, " — comment: ", el("code", { class: "mono", dir: "ltr" }, displayText(u.comment))) : u.reason,
          u.attributedLoanId
            ? loanLink({ id: u.attributedLoanId })
            : !u.settles
              ? "Cannot repay a loan (not the settlement asset)"
              : ctx.canWrite
                ? attributeForm(u, () => ctx.refresh())
                : "—",
        ]),
        openOnly ? "No open unmatched payments." : "No unmatched payments.",
      ),
      pager(ctx, "/settlements", unmatched.nextCursor, "Unmatched payment pages"),
    );
  },
};

/** One loan's settlements, or those of the latest loans (newest first). */
async function historyRows(ctx: Ctx, loanId: string): Promise<{ loan: string; s: Settlement }[]> {
  if (loanId) {
    const one = await get<{ loanId: string; data: Settlement[] }>(`/settlements/${encodeURIComponent(loanId)}?limit=100`);
    // The API lists newest first; one loan's movements read oldest first here.
    return [...one.data].reverse().map((s) => ({ loan: one.loanId, s }));
  }
  const loans = await get<ListPage<Loan>>(`/loans?mode=${ctx.mode}&limit=${RECENT_LOANS}`);
  const funded = loans.data.filter((l) => l.fundedAt !== null);
  const all = await Promise.all(funded.map((l) => get<{ loanId: string; data: Settlement[] }>(`/settlements/${l.id}?limit=100`)));
  return all.flatMap((h) => h.data.map((s) => ({ loan: h.loanId, s }))).sort((a, b) => b.s.createdAt.localeCompare(a.s.createdAt));
}
