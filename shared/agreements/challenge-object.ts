import { DurableObject } from "cloudflare:workers";
import { consumeDecision, failedUse, type AgreementChallenge, type ConsumeResult } from "./challenge-store.ts";

/**
 * One Durable Object per agreement challenge. `consume` reads and writes the
 * object's own storage with no other I/O in between, so the runtime's input
 * gate makes it atomic: of any number of concurrent uses, exactly one wins.
 * Exported from the api worker's entry; imported only there.
 */
export class AgreementChallengeObject extends DurableObject {
  async issue(challenge: AgreementChallenge): Promise<void> {
    await this.ctx.storage.put("challenge", challenge);
    // Keep the object no longer than needed: an hour after expiry it is gone.
    await this.ctx.storage.setAlarm(challenge.expiresAt + 3_600_000);
  }

  async get(): Promise<AgreementChallenge | null> {
    return (await this.ctx.storage.get<AgreementChallenge>("challenge")) ?? null;
  }

  async consume(nowMs: number, usedFor?: string): Promise<ConsumeResult> {
    const result = consumeDecision(await this.ctx.storage.get<AgreementChallenge>("challenge"), nowMs, usedFor);
    if (result.ok) await this.ctx.storage.put("challenge", result.challenge);
    return result;
  }

  async useFailed(nowMs: number): Promise<void> {
    const failed = failedUse(await this.ctx.storage.get<AgreementChallenge>("challenge"), nowMs);
    if (failed) await this.ctx.storage.put("challenge", failed);
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
