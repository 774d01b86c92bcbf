import { LIVE_WALLET_CHAINS, WALLET_ROLES } from "../../../../../shared/domain/wallets.ts";
import { del, get, post, put } from "../api.ts";
import type { Ctx } from "../context.ts";
import { el, when } from "../dom.ts";
import { field, form, input, select, showError } from "../forms.ts";
import { scopeIds } from "./scope-ids.ts";
import type { Wallet } from "./types.ts";
import { proveEvm, tonProofForm } from "./wallet-proof.ts";

/**
 * Live wallets: the list with balances as the chain reports them now and
 * whether control was proven, and (Owner/Admin) adding one, proving control
 * with the connected wallet, a GAS wallet's threshold, deleting.
 */
export async function walletsSection(ctx: Ctx): Promise<HTMLElement> {
  const cursor = ctx.query.get("cursor");
  const page = await get<{ data: Wallet[]; nextCursor: string | null }>(`/wallets?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
  return el(
    "section",
    { "aria-labelledby": "wallets-title" },
    el("h2", { id: "wallets-title" }, "Live wallets"),
    el(
      "p",
      { class: "hint" },
      "Wallets on live chains, yours: the DISBURSEMENT wallet sends principal, COLLECTIONS receives repayments, GAS pays fees. Prove control of each by signing a challenge with it.",
    ),
    page.data.length === 0 ? el("p", { class: "empty" }, "No live wallets yet.") : el("ul", { class: "wallets" }, ...page.data.map((w) => walletItem(ctx, w))),
    page.nextCursor ? el("p", {}, el("a", { href: `/dashboard/go-live?cursor=${encodeURIComponent(page.nextCursor)}`, "data-link": true }, "Next page")) : null,
    ctx.canWrite ? addWalletForm(ctx) : null,
  );
}

function addWalletForm(ctx: Ctx): HTMLElement {
  const options = (values: readonly string[]) => values.map((v) => ({ value: v, label: v }));
  return el(
    "div",
    {},
    el("h3", {}, "Add a wallet"),
    form(
      { label: "Add a wallet", submit: "Add wallet" },
      [
        field("chain", "Chain", select(options(LIVE_WALLET_CHAINS))),
        field("role", "Role", select(options(WALLET_ROLES), {}, "DISBURSEMENT")),
        field("address", "Address", input({ class: "mono", spellcheck: "false", autocomplete: "off" }), "EVM: 0x…; TON: raw or user-friendly."),
      ],
      async (data) => {
        await post("/wallets", { chain: data.get("chain"), role: data.get("role"), address: data.get("address") });
        ctx.refresh();
      },
    ),
  );
}

function walletItem(ctx: Ctx, w: Wallet): HTMLElement {
  const native = w.chain === "TON" ? "TON" : w.chain === "POLYGON" ? "POL" : "ETH";
  const unread = "not readable on this deployment";
  const row = (term: string, value: string | Node) => [el("dt", {}, term), el("dd", {}, value)];
  return el(
    "li",
    { class: "wallet", "data-wallet": w.id },
    el("h3", {}, `${w.chain} ${w.role}`),
    el(
      "dl",
      {},
      ...row("Address", el("span", { class: "mono" }, w.address)),
      ...row("Control", w.controlVerified ? `Proven ${when(w.verifiedAt)}` : "Not proven"),
      ...row("Stablecoin balance", w.stablecoinBalance ?? unread),
      ...row(`${native} balance`, w.nativeBalance === null ? unread : `${w.nativeBalance} ${native}`),
      ...(w.role === "GAS" ? row("Gas alert under", w.gasThreshold ? `${w.gasThreshold} ${native}` : "no alert") : []),
    ),
    ctx.canWrite ? walletActions(ctx, w, native) : null,
  );
}

function walletActions(ctx: Ctx, w: Wallet, native: string): HTMLElement {
  const status = el("p", { class: "form-status", role: "status" });
  const error = el("p", { class: "form-error", role: "alert", hidden: true });
  const extra = el("div", {});
  const fail = (e: unknown) => {
    status.textContent = "";
    showError(box, e);
  };
  const prove = el("button", { type: "button" }, "Prove control");
  prove.addEventListener("click", async () => {
    error.hidden = true;
    prove.disabled = true;
    try {
      if (w.chain === "TON") extra.replaceChildren(await tonProofForm(w, () => ctx.refresh()));
      else {
        await proveEvm(w, (text) => (status.textContent = text));
        ctx.refresh();
      }
    } catch (e) {
      fail(e);
    } finally {
      prove.disabled = false;
    }
  });
  const remove = el("button", { type: "button", class: "danger" }, "Delete wallet");
  remove.addEventListener("click", async () => {
    // Two clicks: a deleted wallet stops funding or collecting at once.
    if (remove.dataset.confirm !== "yes") {
      remove.dataset.confirm = "yes";
      remove.textContent = "Click again to delete";
      return;
    }
    try {
      await del(`/wallets/${w.id}`);
      ctx.refresh();
    } catch (e) {
      fail(e);
    }
  });
  const box = el(
    "div",
    { class: "wallet-actions" },
    error,
    el("div", { class: "actions" }, w.controlVerified ? null : prove, remove, status),
    extra,
    w.role === "GAS" ? gasThresholdForm(ctx, w, native) : null,
  );
  return box;
}

function gasThresholdForm(ctx: Ctx, w: Wallet, native: string): HTMLElement {
  const f = form(
    { label: `Gas alert threshold of ${w.address}`, submit: "Save threshold" },
    [field("gasThreshold", `Alert when under (${native})`, input({ inputmode: "decimal", value: w.gasThreshold ?? "" }), "Empty: no alert.")],
    async (data) => {
      const value = String(data.get("gasThreshold") ?? "").trim();
      await put(`/wallets/${w.id}`, { gasThreshold: value === "" ? null : value });
      ctx.refresh();
    },
  );
  scopeIds(f, w.id);
  return f;
}
