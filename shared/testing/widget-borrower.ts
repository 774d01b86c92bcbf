import { keyPairFromSeed, sign } from "@ton/crypto";
import { WalletContractV4 } from "@ton/ton";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { tonConnectSignDataTextHash } from "../domain/wallet-signatures.ts";

/** The widget host the embed test app names (`widgetHost`): a valid TON Connect domain. */
export const TEST_WIDGET_HOST = "embed.svc-credit.test";

/** A borrower's wallet as the widget drives it: its address, and the signature of a text the way its wallet signs. */
export type TestBorrower = {
  address: string;
  sign(message: string): Promise<{ walletSignature: string; publicKey?: string; timestamp?: number; domain?: string }>;
};

/** An EVM wallet (EIP-191 personal_sign). */
export function evmBorrower(account: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())): TestBorrower & { account: PrivateKeyAccount } {
  return { account, address: account.address, sign: async (message) => ({ walletSignature: await account.signMessage({ message }) }) };
}

/** A TON v4 wallet on testnet, signing TON Connect `signData` text for `domain`. */
export function tonBorrower(domain = TEST_WIDGET_HOST): TestBorrower {
  const keys = keyPairFromSeed(Buffer.from(crypto.getRandomValues(new Uint8Array(32))));
  const address = WalletContractV4.create({ workchain: 0, publicKey: keys.publicKey }).address.toString({ testOnly: true });
  return {
    address,
    async sign(text) {
      const timestamp = Math.floor(Date.now() / 1000);
      const hash = await tonConnectSignDataTextHash({ address, domain, timestamp, text });
      return { walletSignature: sign(Buffer.from(hash), keys.secretKey).toString("base64"), publicKey: keys.publicKey.toString("hex"), timestamp, domain };
    },
  };
}

type Res = { status: number; body: any; headers: Headers };
/** An accept body (workers/embed/routes/schemas.ts `AcceptBody`, loosely: tests also send bad values). */
type AcceptBody = {
  walletAddress: string;
  amount: string;
  tenureDays: number;
  agreementChallengeId: string;
  walletSignature: string;
  [field: string]: unknown;
};
type DrawInput = { amount: string; tenureDays: number; channel?: string; idempotencyKey?: string; [field: string]: unknown };
type Post = (path: string, body: unknown, headers?: Record<string, string>) => Promise<Res>;

/**
 * What the widget does, over any transport (the embed app in Bun or the
 * stack in workerd): open a wallet session, quote and accept a draw.
 *
 * @example
 * const w = widgetCalls((path, body, headers) => e.request("POST", `/v1/embed/${key}${path}`, { body, headers }));
 * const { status, body } = await w.draw(evmBorrower(), { amount: "100.00", tenureDays: 7 });
 */
export function widgetCalls(post: Post) {
  async function session(b: TestBorrower): Promise<string> {
    const challenge = await post("/wallet-session/challenge", { walletAddress: b.address });
    if (challenge.status !== 200) throw new Error(`session challenge: ${challenge.status} ${JSON.stringify(challenge.body)}`);
    const opened = await post("/wallet-session", { walletAddress: b.address, challengeId: challenge.body.id, ...(await b.sign(challenge.body.message)) });
    if (opened.status !== 200) throw new Error(`wallet session: ${opened.status} ${JSON.stringify(opened.body)}`);
    return opened.body.token as string;
  }
  async function quote(b: TestBorrower, input: { amount: string; tenureDays: number }) {
    const res = await post("/quote", { walletAddress: b.address, ...input });
    if (res.status !== 200) throw new Error(`quote: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { agreementChallenge: { id: string; message: string } };
  }
  /** The accept body for a fresh quote, signed by the borrower. */
  async function acceptBody(b: TestBorrower, input: DrawInput): Promise<AcceptBody> {
    const q = await quote(b, { amount: input.amount, tenureDays: input.tenureDays });
    return { walletAddress: b.address, agreementChallengeId: q.agreementChallenge.id, ...(await b.sign(q.agreementChallenge.message)), ...input };
  }
  return {
    session,
    quote,
    acceptBody,
    accept: (body: AcceptBody) => post("/accept", body),
    async draw(b: TestBorrower, input: DrawInput) {
      return post("/accept", await acceptBody(b, input));
    },
  };
}
