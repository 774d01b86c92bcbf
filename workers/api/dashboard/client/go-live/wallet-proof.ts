import { post } from "../api.ts";
import { copyButton, el } from "../dom.ts";
import { field, form, input } from "../forms.ts";
import { scopeIds } from "./scope-ids.ts";
import type { Wallet, WalletChallenge } from "./types.ts";

type Eip1193 = { request(args: { method: string; params?: unknown[] }): Promise<unknown> };

/** The page's EIP-1193 provider (a browser wallet extension), if any. */
const browserWallet = (): Eip1193 | null => (window as unknown as { ethereum?: Eip1193 }).ethereum ?? null;

const utf8Hex = (text: string) => `0x${[...new TextEncoder().encode(text)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;

/**
 * Proof of control of an EVM wallet: the API's challenge signed with
 * `personal_sign` by the connected browser wallet (EIP-1193), which must
 * offer the wallet's address; then `POST /v1/wallets/:id/verify`. The
 * signature is checked by the API, never here.
 */
export async function proveEvm(wallet: Wallet, progress: (text: string) => void): Promise<void> {
  const provider = browserWallet();
  if (!provider) throw new Error("No browser wallet found. Open this page in a browser with an EVM wallet (such as MetaMask) that holds this address.");
  progress("Connecting to your wallet…");
  const accounts = (await provider.request({ method: "eth_requestAccounts" }).catch(walletError)) as string[];
  const account = accounts.find((a) => a.toLowerCase() === wallet.address.toLowerCase());
  if (!account) throw new Error(`Your wallet offers ${accounts.join(", ") || "no account"}; select ${wallet.address} in it and try again.`);
  progress("Asking for a challenge…");
  const challenge = await post<WalletChallenge>(`/wallets/${wallet.id}/challenge`);
  progress("Sign the message in your wallet…");
  const signature = (await provider.request({ method: "personal_sign", params: [utf8Hex(challenge.message), account] }).catch(walletError)) as string;
  progress("Checking the signature…");
  await post(`/wallets/${wallet.id}/verify`, { challengeId: challenge.id, signature });
}

function walletError(error: unknown): never {
  const code = (error as { code?: number } | null)?.code;
  if (code === 4001) throw new Error("You declined the request in your wallet.");
  throw new Error(`Your wallet answered: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * Proof of control of a TON wallet: a TON Connect wallet signs the challenge
 * with `signData` (text payload); the merchant pastes the reply's signature,
 * public key, timestamp and domain, and the API checks them.
 */
export async function tonProofForm(wallet: Wallet, done: () => void): Promise<HTMLElement> {
  const challenge = await post<WalletChallenge>(`/wallets/${wallet.id}/challenge`);
  const f = form(
    { label: `Proof of control of ${wallet.address}`, submit: "Verify the signature" },
    [
      field("signature", "Signature (base64)", input({ class: "mono", spellcheck: "false" })),
      field("publicKey", "Public key", input({ class: "mono", spellcheck: "false" })),
      field("timestamp", "Timestamp (Unix seconds)", input({ inputmode: "numeric" })),
      field("domain", "Domain", input({ spellcheck: "false" })),
    ],
    async (data) => {
      const timestamp = String(data.get("timestamp") ?? "").trim();
      await post(`/wallets/${wallet.id}/verify`, {
        challengeId: challenge.id,
        signature: data.get("signature"),
        publicKey: data.get("publicKey"),
        timestamp: /^\d+$/.test(timestamp) ? Number(timestamp) : timestamp,
        domain: data.get("domain"),
      });
      done();
    },
  );
  scopeIds(f, wallet.id);
  return el(
    "div",
    { class: "notice ton-proof" },
    el(
      "p",
      {},
      "TON proof needs a TON Connect wallet: sign this text with its signData (text payload) before ",
      new Date(challenge.expiresAt).toLocaleTimeString(),
      ", then paste the reply's fields here.",
    ),
    el("pre", { class: "mono", tabindex: 0, "aria-label": "Message to sign" }, challenge.message),
    copyButton(challenge.message, "Copy the message"),
    f,
  );
}
