import type { EvmSenderObject } from "./evm-sender-object.ts";
import { type EvmClaim, type EvmSendRecord, type EvmSenders, senderName } from "./evm-send-record.ts";

/**
 * The senders' nonce books over the EvmSenderObject namespace (binding
 * `EVM_SENDERS`, hosted by the api worker): the object named
 * `<chain>:<address>` is that wallet's single nonce writer. Kept apart from
 * the class so that importing it pulls in no `cloudflare:workers`.
 */
export function durableEvmSenders(namespace: DurableObjectNamespace<EvmSenderObject>): EvmSenders {
  return {
    sender(chain, address) {
      const name = senderName(chain, address);
      const stub = () => namespace.get(namespace.idFromName(name));
      // RPC wraps return types in stubs' Rpc types; the object returns plain data of these shapes.
      return {
        get: async (reference) => (await stub().get(name, reference)) as EvmSendRecord | null,
        claim: async (reference, pendingCount, reservation) => (await stub().claim(name, reference, pendingCount, reservation)) as EvmClaim,
        addSigned: async (reference, tx, reservation) => (await stub().addSigned(name, reference, tx, reservation)) as EvmSendRecord | null,
        release: async (reference, hash, reusable) => {
          await stub().release(name, reference, hash, reusable);
        },
        fail: async (reference, reason, attempt) => (await stub().fail(name, reference, reason, attempt)) as EvmSendRecord | null,
        sawNonceUsed: async (reference, attempt, at) => (await stub().sawNonceUsed(name, reference, attempt, at)) as EvmSendRecord | null,
        close: async (reference, reservation) => (await stub().close(name, reference, reservation)) as EvmSendRecord | null,
        claimGap: async (nonce, pendingCount) => (await stub().claimGap(name, nonce, pendingCount)) as EvmClaim,
      };
    },
  };
}
