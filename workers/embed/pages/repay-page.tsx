/** @jsxImportSource hono/jsx */
import qrcode from "qrcode-generator";
import { evmPaymentLinks } from "../../../shared/chains/evm/eip681.ts";
import type { EvmRepaymentInstructions, RepaymentInstructions } from "../../../shared/chains/repayment-instructions.ts";
import type { Branding } from "../../../shared/domain/branding.ts";
import { nativeSymbol } from "../../../shared/domain/wallets.ts";
import { POWERED_BY } from "../../../shared/embed/config-view.ts";
import { brandColor, textOn } from "./brand-colors.ts";
import { HtmlPage } from "./html-page.tsx";

export type RepayPageInput = {
  nonce: string;
  branding: Branding;
  loan: { id: string; status: string; chain: string; stablecoin: string; amountDue: string; dueAt: string | null; borrowerWalletAddress: string };
  instructions: RepaymentInstructions | null;
  embedKey: string;
  /** The framing page's origin (already checked against the program's); null: post nothing. */
  parentOrigin: string | null;
};

/** An SVG QR code of `text` (server-rendered: the page needs no script for it). */
export function qrSvg(text: string): string {
  const q = qrcode(0, "M");
  q.addData(text);
  q.make();
  return q.createSvgTag({ cellSize: 4, margin: 2, scalable: true });
}

function CopyField(props: { label: string; value: string; id: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <div class="copy">
        <input id={props.id} readonly value={props.value} />
        <button type="button" data-copy={props.id}>
          Copy
        </button>
      </div>
    </div>
  );
}

/**
 * An EVM repayment by hand, for a wallet on another device or one the page
 * cannot reach: each of the two steps as a pre-filled wallet link (EIP-681),
 * its QR code, and the transaction's fields to copy (send 0 of the native
 * coin, to the address, with the data), in order.
 */
function EvmSteps({ i }: { i: EvmRepaymentInstructions }) {
  const links = evmPaymentLinks(i);
  const steps = [
    { n: 1, what: `Approve ${i.amount} ${i.token.symbol} for the pool`, link: links.approve, tx: i.transactions[0]! },
    { n: 2, what: `Repay ${i.amount} ${i.token.symbol}`, link: links.repay, tx: i.transactions[1]! },
  ];
  return (
    <details>
      <summary>Pay from another wallet (QR codes and the transactions to send)</summary>
      <p>
        Network: chain id {i.chainId}. Send both from the wallet that borrowed, in this order; each sends 0 {nativeSymbol(i.chain)} and pays only gas.
      </p>
      {steps.map((s) => (
        <section aria-labelledby={`step-${s.n}`}>
          <h2 id={`step-${s.n}`}>
            Step {s.n}: {s.what}
          </h2>
          <p>
            <a class="button" href={s.link} id={`pay-evm-step-${s.n}`}>
              Open step {s.n} in my wallet
            </a>
          </p>
          <div class="qr" role="img" aria-label={`QR code of step ${s.n}`} dangerouslySetInnerHTML={{ __html: qrSvg(s.link) }} />
          <CopyField label="To" value={s.tx.to} id={`f-step-${s.n}-to`} />
          <CopyField label="Data" value={s.tx.data} id={`f-step-${s.n}-data`} />
        </section>
      ))}
    </details>
  );
}

/**
 * The hosted repayment page `{embed_url}/embed/<key>/repay/<loanId>` (SPEC.md
 * rule 7): amount due now, due date, and per chain: EVM a button that sends
 * the approve and the repay through the connected wallet; TON a `ton://` link,
 * its QR code, and the manual transfer fields with copy buttons and the
 * warning that exchange transfers lose the comment. Branding values are
 * escaped by JSX; the color is used only when it is strictly #RRGGBB.
 */
export function RepayPage(p: RepayPageInput) {
  const color = brandColor(p.branding.primaryColor);
  const i = p.instructions;
  const style = `:root{--brand:${color};--on-brand:${textOn(color)}}body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:16px;max-width:480px;color:#111}h1{font-size:1.25rem}.due{font-size:2rem;font-weight:700}.field{margin:12px 0}.copy{display:flex;gap:8px}.copy input{flex:1;min-width:0;font:inherit;padding:8px;border:1px solid #888;border-radius:6px}button,a.button{background:var(--brand);color:var(--on-brand);border:0;border-radius:6px;padding:10px 14px;font:inherit;text-decoration:none;display:inline-block;cursor:pointer}.warn{background:#fff4e5;border-left:4px solid #b45309;padding:8px 12px}.qr svg{width:200px;height:200px}footer{margin-top:24px;color:#555;font-size:.875rem}img.logo{max-height:40px}`;
  return (
    <HtmlPage
      head={
        <>
          <title>Repay your loan</title>
          <style>{style}</style>
        </>
      }
    >
      <body>
        <header>
          {p.branding.logoUrl ? <img class="logo" src={p.branding.logoUrl} alt={`${p.branding.companyName ?? ""} logo`} /> : null}
          <h1>Repay your loan{p.branding.companyName ? ` with ${p.branding.companyName}` : ""}</h1>
        </header>
        <main>
          {p.loan.status === "REPAID" ? (
            <p role="status">This loan is repaid. Thank you.</p>
          ) : !i ? (
            <p role="status">
              {p.loan.status === "CREATED"
                ? "This loan has not been funded yet, so there is nothing to repay."
                : "Repayment details for this loan are not available right now. Please contact the merchant."}
            </p>
          ) : (
            <section aria-labelledby="due-label">
              <p id="due-label">Amount due now</p>
              <p class="due" data-testid="amount-due">
                {i.amount} {p.loan.stablecoin}
              </p>
              {p.loan.dueAt ? (
                <p>
                  Due date: <time datetime={p.loan.dueAt}>{new Date(p.loan.dueAt).toUTCString()}</time>
                </p>
              ) : null}
              <p>
                Borrowed by wallet{" "}
                <code data-testid="borrower-wallet" style="word-break:break-all">
                  {p.loan.borrowerWalletAddress}
                </code>
                . Pay from that wallet: this page is for that loan only.
              </p>
              {"transactions" in i ? (
                <div>
                  <p>Your wallet signs two transactions: an approval of the stablecoin for the pool, then the repayment.</p>
                  <button type="button" id="pay-evm">
                    Repay with my wallet
                  </button>
                  <p id="pay-status" role="status" aria-live="polite"></p>
                  {/* Script text is not entity-decoded by browsers: raw JSON, with "<" escaped so it cannot close the tag. */}
                  <script type="application/json" id="instructions" dangerouslySetInnerHTML={{ __html: JSON.stringify(i).replace(/</g, "\\u003c") }} />
                  <EvmSteps i={i} />
                </div>
              ) : "comment" in i ? (
                <div>
                  <p>
                    <a class="button" href={i.links.ton} id="pay-ton">
                      Open in my TON wallet
                    </a>
                  </p>
                  <div class="qr" role="img" aria-label="QR code of the payment link" dangerouslySetInnerHTML={{ __html: qrSvg(i.links.ton) }} />
                  <p class="warn" role="note">
                    Send from your own wallet. Transfers from an exchange lose the comment and are not matched to your loan.
                  </p>
                  <CopyField label="Address" value={i.to} id="f-to" />
                  <CopyField label={`Amount (${i.asset})`} value={i.amount} id="f-amount" />
                  <CopyField label="Comment (required, exactly)" value={i.comment} id="f-comment" />
                </div>
              ) : (
                <div>
                  <p>
                    <a class="button" href={i.links.solana}>
                      Open in my Solana wallet
                    </a>
                  </p>
                  <CopyField label="Address" value={i.to} id="f-to" />
                  <CopyField label={`Amount (${i.asset})`} value={i.amount} id="f-amount" />
                  <CopyField label="Memo (required, exactly)" value={i.memo} id="f-memo" />
                </div>
              )}
            </section>
          )}
        </main>
        <footer>{POWERED_BY}</footer>
        <script nonce={p.nonce} dangerouslySetInnerHTML={{ __html: pageScript(p.embedKey, p.loan.id, p.parentOrigin, p.loan.borrowerWalletAddress) }} />
      </body>
    </HtmlPage>
  );
}

/**
 * The page's only script (nonce'd): in the widget's frame, `svc:resize` and
 * `svc:loan-repaid` to the parent's exact origin; copy buttons; and the EVM flow with the
 * wallet the browser offers (EIP-6963 discovery, else window.ethereum):
 * only from the wallet that borrowed (another connected account is refused
 * before anything is signed: the pool credits any payer, so a link sent to
 * someone else would have them pay this loan instead of their own), switch
 * to the chain, send approve then repay, then poll the loan until it
 * is REPAID, each poll sending back the last answer's `x-d1-bookmark` (it
 * reads a replica never older than the last answer; db/read-session.ts).
 */
function pageScript(embedKey: string, loanId: string, parentOrigin: string | null, borrower: string): string {
  const parent = JSON.stringify(parentOrigin).replace(/</g, "\\u003c");
  const wallet = JSON.stringify(borrower).replace(/</g, "\\u003c");
  return `(function(){
var parentOrigin=${parent};var borrower=${wallet};var framed=parentOrigin&&window.parent!==window;
function post(m){if(framed)window.parent.postMessage(m,parentOrigin);}
if(framed){var last=0;var size=function(){var h=Math.ceil(document.documentElement.getBoundingClientRect().height);if(h!==last){last=h;post({type:"svc:resize",height:h});}};new ResizeObserver(size).observe(document.documentElement);size();}
document.querySelectorAll("[data-copy]").forEach(function(b){b.addEventListener("click",function(){var el=document.getElementById(b.getAttribute("data-copy"));if(el&&navigator.clipboard){navigator.clipboard.writeText(el.value).then(function(){b.textContent="Copied";});}});});
var btn=document.getElementById("pay-evm");if(!btn)return;
var providers=[];window.addEventListener("eip6963:announceProvider",function(e){providers.push(e.detail.provider);});window.dispatchEvent(new Event("eip6963:requestProvider"));
var status=document.getElementById("pay-status");function say(t){status.textContent=t;}
var ins=JSON.parse(document.getElementById("instructions").textContent);
btn.addEventListener("click",async function(){
  var provider=providers[0]||window.ethereum;if(!provider){say("No wallet found in this browser.");return;}
  try{
    btn.disabled=true;var accounts=await provider.request({method:"eth_requestAccounts"});var from=accounts[0];
    if(!from||String(from).toLowerCase()!==borrower.toLowerCase()){say("Connect the wallet that borrowed ("+borrower+"): the connected one, "+from+", would pay this loan, not its own.");btn.disabled=false;return;}
    var chainHex="0x"+ins.chainId.toString(16);
    try{await provider.request({method:"wallet_switchEthereumChain",params:[{chainId:chainHex}]});}catch(e){}
    for(var i=0;i<ins.transactions.length;i++){var tx=ins.transactions[i];say(tx.description+"…");await provider.request({method:"eth_sendTransaction",params:[{from:from,to:tx.to,data:tx.data,value:"0x0"}]});}
    say("Sent. Waiting for the repayment to settle…");
    var bm=null;for(var n=0;n<60;n++){var r=await fetch("/v1/embed/${embedKey}/loans/${loanId}",bm?{headers:{"x-d1-bookmark":bm}}:{});bm=r.headers.get("x-d1-bookmark")||bm;if(r.ok){var l=(await r.json()).loan;if(l.status==="REPAID"){say("Repaid. Thank you.");btn.hidden=true;post({type:"svc:loan-repaid",loanId:l.id});return;}}await new Promise(function(ok){setTimeout(ok,2000);});}
    say("Still settling; refresh this page in a minute.");
  }catch(e){say("The wallet did not complete the payment: "+(e&&e.message||e));btn.disabled=false;}
});
})();`;
}
