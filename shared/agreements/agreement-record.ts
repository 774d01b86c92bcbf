import type { SQL } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { agreements } from "../../db/schema/loan-records.ts";
import { chainConfig } from "../chains/chain-config.ts";
import { newId } from "../domain/ids.ts";
import type { AgreementChallenge } from "./challenge-store.ts";
import type { TonSignDataFields } from "./verify-wallet-signature.ts";

/**
 * What is kept of a signed agreement, immutably (SPEC.md "Loan-level KYC
 * confirmation and agreement"): the exact message the wallet signed, the
 * agreement text (the merchant's, or the message), the signature, and for
 * TON Connect the public key, timestamp and domain the signature covers, so
 * it can be verified again at any time.
 */
export type AgreementRecord = {
  id: string;
  challengeId: string;
  walletAddress: string;
  chain: AgreementChallenge["chain"];
  message: string;
  agreementText: string;
  walletSignature: string;
  ton: TonSignDataFields | null;
  createdAt: Date;
};

/**
 * The record of a consumed challenge's signature. The TON fields are kept on
 * TON only (where the verifier required them); anything a client sent along
 * with an EVM or Solana signature is not part of what was signed.
 */
export function agreementRecord(input: {
  challenge: AgreementChallenge;
  walletSignature: string;
  ton?: Partial<TonSignDataFields> | null;
  agreementText?: string | null;
  now: Date;
}): AgreementRecord {
  const { challenge, ton } = input;
  const onTon = chainConfig(challenge.chain).family === "TON" && ton?.publicKey !== undefined && ton.timestamp !== undefined && ton.domain !== undefined;
  return {
    id: newId(),
    challengeId: challenge.id,
    walletAddress: challenge.walletAddress,
    chain: challenge.chain,
    message: challenge.message,
    agreementText: input.agreementText ?? challenge.message,
    walletSignature: input.walletSignature,
    ton: onTon ? { publicKey: ton.publicKey!, timestamp: ton.timestamp!, domain: ton.domain! } : null,
    createdAt: input.now,
  };
}

/** The insert of a loan's agreement, written only if `condition` holds (the loan's insert or update it belongs to). */
export function agreementInsertIf(db: Db, record: AgreementRecord, loan: { tenantId: string; id: string }, condition: SQL) {
  return insertIf(
    db,
    agreements,
    {
      id: record.id,
      tenantId: loan.tenantId,
      loanId: loan.id,
      challengeId: record.challengeId,
      walletAddress: record.walletAddress,
      chain: record.chain,
      message: record.message,
      agreementText: record.agreementText,
      walletSignature: record.walletSignature,
      createdAt: record.createdAt,
      publicKey: record.ton?.publicKey ?? null,
      signedTimestamp: record.ton?.timestamp ?? null,
      domain: record.ton?.domain ?? null,
    },
    condition,
  );
}
