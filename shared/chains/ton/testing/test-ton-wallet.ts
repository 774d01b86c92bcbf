import { Buffer } from "node:buffer";
import { type Address, internal, SendMode, type Cell } from "@ton/core";
import { keyPairFromSeed, sign } from "@ton/crypto";
import type { Blockchain } from "@ton/sandbox";
import { WalletContractV5R1 } from "@ton/ton";
import { tonConnectSignDataTextHash } from "../../../domain/wallet-signatures.ts";

/**
 * A mainnet wallet v5r1 of a fresh key in the emulator: its seed (what the
 * operator installs as the signer), its TON Connect `signData` (proof of
 * control), and `send` to make it send internal messages as its owner would.
 */
export type TestV5Wallet = {
  address: Address;
  /** Raw `0:…`, as the service stores TON addresses. */
  raw: string;
  seedHex: string;
  signData(input: { text: string; domain: string; timestamp: number }): Promise<{ signature: string; timestamp: number; domain: string; publicKey: string }>;
  send(messages: { to: Address; value: bigint; body?: Cell; bounce?: boolean }[]): Promise<void>;
};

export function testV5Wallet(blockchain: Blockchain): TestV5Wallet {
  const seed = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
  const keys = keyPairFromSeed(seed);
  const wallet = blockchain.openContract(WalletContractV5R1.create({ workchain: 0, publicKey: keys.publicKey }));
  const address = wallet.address;
  const friendly = address.toString({ bounceable: false });
  const publicKey = keys.publicKey.toString("hex");
  return {
    address,
    raw: address.toRawString(),
    seedHex: seed.toString("hex"),
    async signData({ text, domain, timestamp }) {
      const hash = await tonConnectSignDataTextHash({ address: friendly, domain, timestamp, text });
      return { signature: sign(Buffer.from(hash), keys.secretKey).toString("base64"), timestamp, domain, publicKey };
    },
    async send(messages) {
      const seqno = await wallet.getSeqno();
      await wallet.sendTransfer({
        seqno,
        secretKey: keys.secretKey,
        sendMode: SendMode.PAY_GAS_SEPARATELY | SendMode.IGNORE_ERRORS,
        messages: messages.map((m) => internal({ to: m.to, value: m.value, body: m.body, bounce: m.bounce ?? true })),
      });
    },
  };
}
