import { ApiError, type Bootstrap, type EmbedApi, type Loan, type Quote } from "./api.ts";
import type { WidgetBoot } from "./boot.ts";
import { announce, el, showStep } from "./dom.ts";
import { formatDate, formatFee, normalizeAmount, toCents } from "./format.ts";
import type { ParentChannel } from "./parent.ts";
import type { PairingUi, WalletOption, WalletSession } from "./wallets/wallet.ts";

export type FlowDeps = {
  boot: WidgetBoot;
  api: EmbedApi;
  parent: ParentChannel;
  root: HTMLElement;
  status: HTMLElement;
  /** The ways to connect, and a callback for wallets that announce themselves later. */
  wallets(onChange: (options: WalletOption[]) => void): WalletOption[];
  qrSvg(text: string): Promise<string>;
};

const KYC_POLL_MS = 4000;
const LOAN_POLL_MS = 1500;
const QUOTE_DEBOUNCE_MS = 300;
/** A quote whose challenge expires sooner than this is renewed before signing. */
const CHALLENGE_MARGIN_MS = 30_000;
/** An agreement challenge's life (DECISIONS.md: five minutes). */
const CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * What the borrower reads for a failure: the service's own message, or a
 * plain sentence for the wallet's and the network's (a wallet library's
 * error carried its whole dump, "Details: … Version: viem@…", and a lost
 * connection read "Failed to fetch").
 */
export function message(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  const e = err as { code?: unknown; name?: unknown; shortMessage?: unknown; message?: unknown; cause?: unknown } | null;
  const rejected = (x: typeof e): boolean =>
    !!x && (x.code === 4001 || x.name === "UserRejectedRequestError" || (x.cause !== undefined && rejected(x.cause as typeof e)));
  if (rejected(e)) return "You declined the request in your wallet. Try again when you are ready.";
  if (err instanceof TypeError && /fetch|network|load failed/i.test(err.message)) return "Could not reach the service: check your connection and try again.";
  if (typeof e?.shortMessage === "string") return e.shortMessage;
  return err instanceof Error ? err.message : String(err);
}

/** The service's refusal of an amount, in the borrower's words and with the stablecoin ("amount: must be between 10.00 and 1000.00"). */
const amountMessage = (text: string, coin: string): string =>
  text.replace(/^amount: must be between (\S+) and (\S+)$/, `Enter an amount between $1 and $2 ${coin}.`).replace(/^amount: /, "Amount: ");

/**
 * The borrower's flow in the iframe: connect a wallet (and sign the
 * wallet-session challenge, which proves it is the borrower's) → eligibility → credit
 * line (KYC with the merchant when required, then the revolving credit-line
 * agreement) → drawdown with a live quote → signature and accept →
 * confirmation polling the loan → repayment. Each step replaces the last;
 * a returning borrower whose line has KYC and agreement goes straight to
 * the drawdown.
 */
export function startFlow(d: FlowDeps): void {
  const { boot, api, parent, root, status } = d;
  const cfg = boot.config;
  const coin = cfg.stablecoin;
  const merchant = cfg.branding.companyName ?? cfg.program.name;
  let wallet: WalletSession | null = null;
  let line: Bootstrap | null = null;
  /** While KYC is awaited: stops the re-check timer and the parent listener. */
  let stopKyc: (() => void) | null = null;
  let kycBusy = false;
  const waitingForKyc = () => stopKyc !== null;

  /** The account the wallet switched to (null: it disconnected) before a loan was asked for: this flow then shows nothing more. */
  let switchedTo: string | null | undefined;
  /** A switch while the draw's signature was asked for: shown if the draw fails, forgotten once its loan exists. */
  let pendingSwitch: string | null | undefined;
  /** From the draw's signature on: the loan is the connected account's whatever the wallet does next. */
  let committed = false;
  const show = (id: string, title: string, ...content: Parameters<typeof showStep>[3][]) =>
    switchedTo === undefined ? showStep(root, id, title, ...content) : null;

  /**
   * The wallet now uses another account (or none): everything shown so far (eligibility, the credit line, a quote)
   * is the first account's, and the next signature would be asked of an account the wallet no longer shows. The
   * borrower starts again, with the account the wallet uses now. Once the draw is signed, the loan is the first
   * account's and its status stays on screen.
   */
  function accountChanged(from: WalletSession, next: string | null): void {
    if (wallet !== from || switchedTo !== undefined) return;
    const same = next !== null && next.toLowerCase() === from.address.toLowerCase();
    pendingSwitch = same ? undefined : next;
    if (committed || pendingSwitch === undefined) return;
    switchedTo = pendingSwitch;
    stopKyc?.();
    stopKyc = null;
    announce(status, "");
    const was = shortAddress(from.displayAddress ?? from.address);
    showStep(
      root,
      "switched",
      switchedTo ? "Your wallet switched accounts" : "Your wallet disconnected",
      el(
        "p",
        {},
        switchedTo
          ? `This window was set up for ${was}; your wallet now uses ${shortAddress(switchedTo)}.`
          : `This window was set up for ${was}, which your wallet no longer shares.`,
      ),
      el("p", {}, "Start again to borrow with the account your wallet uses now."),
      el("button", { type: "button", onclick: () => location.reload() }, "Start again"),
    );
  }

  const errorBox = () => el("p", { class: "error", role: "alert", hidden: true });
  const showError = (box: HTMLElement, text: string) => {
    box.textContent = text;
    box.hidden = false;
  };

  // 1. Connect.
  function connectStep(): void {
    const list = el("ul", { class: "wallets", role: "list" });
    const error = errorBox();
    const pairing = el("div", { class: "pairing", hidden: true });
    const ui: PairingUi = {
      showPairing(uri, walletName) {
        pairing.hidden = false;
        pairing.replaceChildren(
          el("p", {}, `Scan with ${walletName}, or open it on this device:`),
          qrBlock(uri),
          el("p", {}, el("a", { href: uri, class: "button secondary", rel: "noopener" }, "Open wallet app")),
        );
      },
    };
    const render = (options: WalletOption[]) => {
      list.replaceChildren(
        ...options.map((option) =>
          el(
            "li",
            {},
            el(
              "button",
              {
                type: "button",
                class: "wallet",
                "data-wallet": option.id,
                onclick: async (event) => {
                  const button = event.currentTarget as HTMLButtonElement;
                  button.disabled = true;
                  error.hidden = true;
                  announce(status, `Connecting ${option.name}…`);
                  try {
                    wallet = await option.connect(ui);
                  } catch (err) {
                    button.disabled = false;
                    return showError(error, `${option.name} did not connect: ${message(err)}`);
                  }
                  try {
                    await openSession();
                  } catch (err) {
                    button.disabled = false;
                    return showError(error, `${option.name} did not confirm the wallet: ${message(err)}`);
                  }
                  const connected = wallet;
                  connected.onAccountChange?.((next) => accountChanged(connected, next));
                  announce(status, `Connected ${shortAddress(wallet.displayAddress ?? wallet.address)}`);
                  await guarded(eligibilityStep);
                },
              },
              option.icon ? el("img", { src: option.icon, alt: "", width: 24, height: 24 }) : null,
              `Connect ${option.name}`,
            ),
          ),
        ),
      );
      if (options.length === 0)
        list.replaceChildren(el("li", {}, `No wallet found in this browser. Install a wallet that supports ${coin} on ${cfg.chain}, then reload.`));
    };
    render(d.wallets(render));
    show(
      "connect",
      `Borrow ${coin} with ${merchant}`,
      el("p", {}, `From ${cfg.minAmount} to ${cfg.maxAmount} ${coin}, repaid in ${cfg.tenures.join(", ")} days. Fee: ${formatFee(cfg.processingFee, coin)}.`),
      el("p", {}, "Connect the wallet that will receive the loan and repay it."),
      list,
      pairing,
      error,
    );
  }

  function qrBlock(uri: string): HTMLElement {
    const box = el("div", { class: "qr", role: "img", "aria-label": "QR code of the wallet connection link" });
    // Our own QR generator's SVG, built from the link; no outside markup.
    void d.qrSvg(uri).then((svg) => (box.innerHTML = svg));
    return box;
  }

  /**
   * A wallet session: the wallet signs the service's challenge, which proves
   * it is the borrower's, so that eligibility, bootstrap and quote answer with
   * its own loans (without a session they show nothing of them).
   */
  async function openSession(): Promise<void> {
    const challenge = await api.sessionChallenge(wallet!.address);
    announce(status, "Confirm in your wallet that it is yours…");
    const signature = await wallet!.signMessage(challenge.message);
    await api.openSession({ walletAddress: wallet!.address, challengeId: challenge.id, ...signature });
  }

  /** A call that needs the wallet session: when it has expired (401), the wallet signs a new one and the call runs again. */
  async function withSession<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) throw err;
      await openSession();
      return call();
    }
  }

  /** Runs a step; when the service cannot answer, says so and offers to try the step again. */
  async function guarded(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (err) {
      show(
        "problem",
        "Something went wrong",
        el("p", { role: "alert" }, message(err)),
        el("button", { type: "button", onclick: () => void guarded(step) }, "Try again"),
      );
    }
  }

  // 2. Eligibility.
  async function eligibilityStep(): Promise<void> {
    show("checking", "Checking your wallet", el("p", { class: "spinner" }, "One moment…"));
    const result = await withSession(() => api.eligibility(wallet!.address));
    // KYC still to do is not a refusal: the credit-line step asks the merchant for it.
    const blocking = result.reasons.filter((r) => r.code !== "KYC_REQUIRED");
    if (!result.eligible && blocking.length > 0) {
      show(
        "ineligible",
        "We can't offer credit to this wallet",
        el("ul", {}, ...blocking.map((r) => el("li", { "data-reason": r.code }, r.message))),
        el("p", {}, `Questions? Contact ${cfg.branding.supportEmail ?? merchant}.`),
      );
      return;
    }
    await creditLineStep();
  }

  // 3. Credit line: KYC, then the agreement.
  async function creditLineStep(): Promise<void> {
    line = await withSession(() => api.bootstrap(wallet!.address));
    if (line.requiresKyc) return kycStep();
    stopKyc?.();
    stopKyc = null;
    if (!line.agreementAccepted) return agreementStep();
    return drawStep();
  }

  function kycStep(): void {
    const current = line!;
    parent.post({ type: "svc:kyc-required", creditLineId: current.creditLine.id, walletAddress: current.creditLine.walletAddress });
    const error = errorBox();
    // One re-check at a time (the parent's message, the timer and the button may coincide), and none once KYC is done.
    const recheck = async () => {
      if (kycBusy || !waitingForKyc()) return;
      kycBusy = true;
      try {
        const next = await withSession(() => api.bootstrap(wallet!.address));
        if (!next.requiresKyc && waitingForKyc()) await guarded(creditLineStep);
      } catch (err) {
        showError(error, message(err));
      } finally {
        kycBusy = false;
      }
    };
    if (!waitingForKyc()) {
      const timer = setInterval(recheck, KYC_POLL_MS);
      const off = parent.on("svc:kyc-complete", () => void recheck());
      stopKyc = () => {
        clearInterval(timer);
        off();
      };
    }
    show(
      "kyc",
      "Verify your identity",
      el("p", {}, `${merchant} needs to verify your identity before you can borrow. Follow their steps; this screen continues by itself when it's done.`),
      el("button", { type: "button", class: "secondary", onclick: () => void recheck() }, "I've finished verifying"),
      error,
    );
  }

  function agreementStep(): void {
    const c = line!.creditLine;
    const box = el("input", { type: "checkbox", id: "agree" });
    const next = el("button", { type: "button", disabled: true, onclick: () => drawStep() }, "Continue");
    box.addEventListener("change", () => (next.disabled = !box.checked));
    show(
      "agreement",
      "Your credit line",
      el(
        "dl",
        { class: "terms" },
        el("dt", {}, "Credit limit"),
        el("dd", {}, `${c.limit} ${coin}`),
        el("dt", {}, "Available now"),
        el("dd", {}, `${c.available} ${coin}`),
        el("dt", {}, "Terms"),
        el("dd", {}, `${cfg.tenures.join(", ")} days per draw`),
        el("dt", {}, "Processing fee"),
        el("dd", {}, `${formatFee(cfg.processingFee, coin)} per draw`),
        el("dt", {}, "Late fee"),
        el("dd", {}, `${formatFee(cfg.lateFee, coin)} per day after the due date`),
        el("dt", {}, "Default"),
        el("dd", {}, `${cfg.gracePeriodDays} days after the due date`),
      ),
      el(
        "p",
        {},
        "This is a revolving line: you may draw again up to the available amount as you repay. Each draw is signed with your wallet, which confirms these terms.",
        cfg.branding.termsUrl ? " " : null,
        cfg.branding.termsUrl ? el("a", { href: cfg.branding.termsUrl, target: "_blank", rel: "noopener" }, "Full terms") : null,
      ),
      el("p", { class: "check" }, box, el("label", { for: "agree" }, "I have read and accept the credit line agreement")),
      next,
    );
  }

  // 4. Drawdown with a live quote.
  function drawStep(): void {
    const c = line!.creditLine;
    if (toCents(c.available) < toCents(cfg.minAmount)) {
      show(
        "drawn",
        "Your credit line is fully drawn",
        el("p", {}, `${c.available} ${coin} is available; the smallest loan is ${cfg.minAmount} ${coin}. Repay your open loan to borrow again.`),
        ...line!.repayableLoans.map((l) =>
          el(
            "p",
            {},
            el(
              "a",
              {
                class: "button",
                href: `${boot.repayPath}${encodeURIComponent(l.id)}${boot.parentOrigin ? `?parent=${encodeURIComponent(boot.parentOrigin)}` : ""}`,
                "data-testid": "repay-open-loan",
              },
              l.dueAt ? `Repay the loan due ${formatDate(l.dueAt)}` : "Repay your loan",
            ),
          ),
        ),
      );
      return;
    }
    const amount = el("input", { id: "amount", name: "amount", inputmode: "decimal", autocomplete: "off", "aria-describedby": "amount-hint", required: true });
    const tenures = el(
      "fieldset",
      {},
      el("legend", {}, "Repay in"),
      ...cfg.tenures.map((days, i) =>
        el("label", { class: "choice" }, el("input", { type: "radio", name: "tenure", value: days, checked: i === 0 }), ` ${days} days`),
      ),
    );
    const quoteBox = el("div", { class: "quote", "aria-live": "polite", "data-testid": "quote" });
    const error = errorBox();
    const sign = el("button", { type: "submit", disabled: true }, "Sign and borrow");
    let quote: Quote | null = null;
    // When the quote came, on this browser's clock: its challenge's expiresAt is on the tenant's clock (a sandbox clock
    // moved ahead says a day is left), so the widget also counts the challenge's 5 minutes from its arrival.
    let quotedAt = 0;
    let seq = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;

    const tenure = () => Number((tenures.querySelector("input:checked") as HTMLInputElement | null)?.value ?? cfg.tenures[0]);
    const refresh = async (): Promise<Quote | null> => {
      const mine = ++seq;
      error.hidden = true;
      quote = null;
      sign.disabled = true;
      const value = normalizeAmount(amount.value);
      if (!value) {
        quoteBox.replaceChildren();
        if (amount.value.trim()) showError(error, `Enter an amount like 25.00, between ${cfg.minAmount} and ${c.available} ${coin}.`);
        return null;
      }
      try {
        const q = await withSession(() => api.quote({ walletAddress: wallet!.address, amount: value, tenureDays: tenure() }));
        if (mine !== seq) return null;
        quote = q;
        quotedAt = Date.now();
        quoteBox.replaceChildren(
          el(
            "dl",
            { class: "terms" },
            el("dt", {}, "You receive"),
            el("dd", {}, `${q.amount} ${coin}`),
            el("dt", {}, "Processing fee"),
            el("dd", {}, `${q.processingFee} ${coin}`),
            el("dt", {}, "Total to repay"),
            el("dd", { "data-testid": "total-due" }, `${q.totalDue} ${coin}`),
            el("dt", {}, "Due"),
            el("dd", {}, formatDate(q.dueAt)),
          ),
        );
        sign.disabled = false;
        return q;
      } catch (err) {
        if (mine === seq) {
          quoteBox.replaceChildren();
          showError(error, amountMessage(message(err), coin));
        }
        return null;
      }
    };
    const later = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void refresh(), QUOTE_DEBOUNCE_MS);
    };
    amount.addEventListener("input", later);
    tenures.addEventListener("change", () => void refresh());

    const form = el(
      "form",
      { novalidate: true },
      el("label", { for: "amount" }, `Amount (${coin})`),
      amount,
      el("p", { id: "amount-hint", class: "hint" }, `${cfg.minAmount} to ${c.available} ${coin} available`),
      tenures,
      quoteBox,
      error,
      sign,
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearTimeout(timer);
      sign.disabled = true;
      try {
        let q = quote;
        const left = Math.min(Date.parse(q?.agreementChallenge.expiresAt ?? ""), quotedAt + CHALLENGE_TTL_MS) - Date.now();
        if (!q || !(left >= CHALLENGE_MARGIN_MS)) q = await refresh();
        if (!q) return;
        sign.disabled = true;
        announce(status, "Confirm the agreement in your wallet…");
        committed = true;
        const signature = await wallet!.signMessage(q.agreementChallenge.message);
        announce(status, "Signed. Creating your loan…");
        const { loan } = await api.accept({
          walletAddress: wallet!.address,
          amount: q.amount,
          tenureDays: q.tenureDays,
          agreementChallengeId: q.agreementChallenge.id,
          channel: boot.channel,
          idempotencyKey: `widget:${q.agreementChallenge.id}`,
          ...signature,
        });
        parent.post({ type: "svc:loan-created", loanId: loan.id, status: loan.status });
        await guarded(() => confirmationStep(loan));
      } catch (err) {
        committed = false;
        if (err instanceof ApiError && err.status === 409 && /KYC/i.test(err.message)) return guarded(creditLineStep);
        if (pendingSwitch !== undefined) return accountChanged(wallet!, pendingSwitch);
        showError(error, message(err));
        quote = null;
        sign.disabled = false;
        announce(status, "");
      }
    });
    show("draw", "How much do you need?", el("p", {}, `Signing in ${wallet!.name} as ${shortAddress(wallet!.displayAddress ?? wallet!.address)}.`), form);
    amount.focus();
  }

  // 5. Confirmation: the loan's status until it is funded (or decided otherwise).
  async function confirmationStep(initial: Loan): Promise<void> {
    const progress = el("p", { role: "status", "data-testid": "loan-status" }, "Your loan is being processed…");
    show("confirmation", "Loan requested", progress);
    announce(status, "");
    let loan = initial;
    for (let i = 0; ; i++) {
      if (loan.status === "ACTIVE") return fundedStep(loan);
      if (loan.derivedStatus === "DECLINED") {
        return void show("declined", "Your loan was declined", el("ul", {}, ...(loan.decision?.reasons ?? []).map((r) => el("li", {}, r.message))));
      }
      progress.textContent =
        loan.decision?.outcome === "MANUAL_REVIEW"
          ? `${merchant} is reviewing your loan. You can close this window; the funds arrive in your wallet once it's approved.`
          : loan.fundingState === "AWAITING_LIQUIDITY"
            ? "Your loan is approved and waiting for funds to be available. It will be sent automatically."
            : loan.fundingState === "HELD"
              ? `Your loan is approved, but ${merchant} has put its funding on hold. You can close this window; ${merchant} will be in touch.`
              : loan.fundingState === "WAITING_KYC"
                ? `Your loan is approved and waits for ${merchant} to confirm your identity. You can close this window.`
                : "Sending the funds to your wallet…";
      await new Promise((resolve) => setTimeout(resolve, i < 40 ? LOAN_POLL_MS : LOAN_POLL_MS * 4));
      loan = (await api.loan(loan.id)).loan;
    }
  }

  function fundedStep(loan: Loan): void {
    parent.post({ type: "svc:loan-funded", loanId: loan.id, fundingTxHash: loan.fundingTxHash });
    announce(status, "Funds sent.");
    show(
      "funded",
      "Funds sent",
      el("p", { role: "status", "data-testid": "loan-status" }, `${loan.principalAmount} ${coin} is on its way to your wallet.`),
      el(
        "dl",
        { class: "terms" },
        el("dt", {}, "Total to repay"),
        el("dd", {}, `${loan.totalDue} ${coin}`),
        el("dt", {}, "Due"),
        el("dd", {}, loan.dueAt ? formatDate(loan.dueAt) : "—"),
        loan.fundingTxHash ? el("dt", {}, "Transaction") : null,
        loan.fundingTxHash ? el("dd", { class: "mono" }, loan.fundingTxHash) : null,
      ),
      el(
        "p",
        {},
        el(
          "a",
          {
            class: "button",
            href: `${boot.repayPath}${encodeURIComponent(loan.id)}${boot.parentOrigin ? `?parent=${encodeURIComponent(boot.parentOrigin)}` : ""}`,
            "data-testid": "repay-link",
          },
          "Repay now",
        ),
      ),
    );
  }

  connectStep();
}

const shortAddress = (address: string) => (address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address);
