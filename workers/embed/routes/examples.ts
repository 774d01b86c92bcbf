/**
 * Request-body examples of the embed document's calls, for readers (doc
 * renderers, generated clients). On the media type, not the schemas: the
 * embed fuzzer takes a schema's example as a canonical value. Each is valid
 * for its schema (workers/api/openapi-lint.test.ts parses them).
 */
const WALLET = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
// An EIP-191 personal_sign signature's shape: 65 bytes, hex.
const SIGNATURE = `0x${"4f".repeat(32)}${"2a".repeat(32)}1b`;

export const WALLET_EXAMPLE = { walletAddress: WALLET };

export const QUOTE_EXAMPLE = { walletAddress: WALLET, amount: "50.00", tenureDays: 7 };

export const ACCEPT_EXAMPLE = {
  walletAddress: WALLET,
  amount: "50.00",
  tenureDays: 7,
  agreementChallengeId: "9b2f6d1e-4c3a-4e7b-8f05-6a1d3c2b9e84",
  walletSignature: SIGNATURE,
  channel: "WEB",
  idempotencyKey: "draw-2026-11-21-1",
};

export const OPEN_WALLET_SESSION_EXAMPLE = { walletAddress: WALLET, challengeId: "5e8d2c1b-3a4f-4b6e-9d07-1c2b3a4d5e6f", walletSignature: SIGNATURE };
