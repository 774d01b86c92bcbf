import { ApiError, get } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";
import { field, form, input, select, showError } from "../forms.ts";
import { loansTable } from "../loans/loan-table.ts";
import { pager, queryString } from "../loans/pager.ts";
import type { ListPage, Loan } from "../loans/types.ts";

/** The filters of `GET /v1/loans` the page offers, by their query names (the dashboard's URL uses the same). */
const FILTERS = ["status", "decision", "chain", "borrowerRef", "borrowerWalletAddress"] as const;

const STATUSES = ["CREATED", "ACTIVE", "REPAID", "DEFAULTED", "DECLINED"];
const DECISIONS = [
  { value: "MANUAL_REVIEW", label: "In manual review" },
  { value: "APPROVED", label: "Approved" },
  { value: "DECLINED", label: "Declined" },
];
const CHAINS = { sandbox: ["POLYGON_AMOY", "BASE_SEPOLIA", "TON_TESTNET", "SOLANA_DEVNET"], live: ["POLYGON", "BASE", "TON"] };

/**
 * Loans: `GET /v1/loans` of the mode in view, newest first, with its filters
 * (status including the derived DECLINED, decision, chain, borrower ref,
 * wallet) as a form whose values live in the page's URL, and the API's
 * cursor as "Next page". Each row links to the loan's page.
 */
export const loansPage: Page = {
  path: "/loans",
  title: "Loans",
  nav: "Loans",
  async render(ctx: Ctx) {
    const filters = Object.fromEntries(FILTERS.map((name) => [name, ctx.query.get(name) ?? ""]));
    const filterBox = filterForm(ctx, filters);
    const filtered = FILTERS.some((name) => filters[name]);
    let page: ListPage<Loan> = { data: [], nextCursor: null };
    try {
      page = await get<ListPage<Loan>>(`/loans${queryString({ ...filters, mode: ctx.mode, limit: "20", cursor: ctx.query.get("cursor") })}`);
    } catch (error) {
      // A filter the API refuses (400) is shown beside its field, as a form's error would be.
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      showError(filterBox, error);
    }
    return pageSection(
      "Loans",
      filterBox,
      loansTable(
        `${ctx.mode === "live" ? "Live" : "Sandbox"} loans, newest first`,
        page.data,
        filtered ? "No loan matches these filters." : `No ${ctx.mode} loans yet. Loans your backend or widget creates appear here.`,
      ),
      pager(ctx, "/loans", page.nextCursor, "Loan pages"),
    );
  },
};

function filterForm(ctx: Ctx, values: Record<string, string>): HTMLElement {
  const any = { value: "", label: "Any" };
  const f = form(
    { label: "Filter loans", submit: "Apply filters" },
    [
      field("status", "Status", select([any, ...STATUSES.map((s) => ({ value: s, label: s }))], {}, values.status)),
      field("decision", "Decision", select([any, ...DECISIONS], {}, values.decision)),
      field("chain", "Chain", select([any, ...CHAINS[ctx.mode].map((c) => ({ value: c, label: c }))], {}, values.chain)),
      field("borrowerRef", "Borrower ref", input({ value: values.borrowerRef, autocomplete: "off" }), "Your reference for the borrower, exactly"),
      field(
        "borrowerWalletAddress",
        "Wallet",
        input({ value: values.borrowerWalletAddress, autocomplete: "off", spellcheck: "false" }),
        "The borrower's wallet address",
      ),
    ],
    async (data) => {
      const next = Object.fromEntries(FILTERS.map((name) => [name, String(data.get(name) ?? "").trim()]));
      ctx.navigate(`/loans${queryString(next)}`);
    },
  );
  f.classList.add("filters");
  const clear = FILTERS.some((name) => values[name]) ? el("p", {}, el("a", { href: "/dashboard/loans" }, "Clear filters")) : null;
  return el("div", {}, f, clear);
}
