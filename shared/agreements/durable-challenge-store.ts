import type { AgreementChallengeObject } from "./challenge-object.ts";
import type { AgreementChallenge, ChallengeStore, ConsumeResult } from "./challenge-store.ts";

/** The ChallengeStore over the AgreementChallengeObject namespace: one object per challenge id. */
export function durableChallengeStore(namespace: DurableObjectNamespace<AgreementChallengeObject>): ChallengeStore {
  const stub = (id: string) => namespace.get(namespace.idFromName(id));
  return {
    issue: (c) => stub(c.id).issue(c),
    get: async (id) => (await stub(id).get()) as AgreementChallenge | null,
    consume: async (id, nowMs, usedFor) => (await stub(id).consume(nowMs, usedFor)) as ConsumeResult,
    useFailed: async (id, nowMs) => {
      await stub(id).useFailed(nowMs);
    },
  };
}
