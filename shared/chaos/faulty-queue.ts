import { type QueueFaultPolicy, randomSource } from "./faults.ts";

type SendOptions = { delaySeconds?: number; contentType?: QueueContentType };

/**
 * Wraps a Queue producer so that messages are sent twice, delayed at random
 * (so they arrive out of order) or lost (the send succeeds and nothing
 * arrives), as an at-least-once queue may do.
 */
const sources = new Map<string, () => number>();

export function faultyQueue<Body>(inner: Queue<Body>, policy: QueueFaultPolicy): Queue<Body> {
  // One random sequence per policy for the isolate, going on from request to request.
  const key = JSON.stringify(policy);
  if (!sources.has(key)) sources.set(key, randomSource(policy.seed));
  const random = sources.get(key)!;
  const copies = (): number => {
    if (policy.lose && random() < policy.lose) return 0;
    return policy.duplicate && random() < policy.duplicate ? 2 : 1;
  };
  const delay = (asked?: number) => (asked ?? 0) + (policy.reorderSeconds ? Math.floor(random() * (policy.reorderSeconds + 1)) : 0);
  const queue = {
    async send(body: Body, options?: SendOptions) {
      const n = copies();
      for (let i = 0; i < n; i++) await inner.send(body, { ...options, delaySeconds: delay(options?.delaySeconds) });
    },
    async sendBatch(messages: Iterable<MessageSendRequest<Body>>) {
      const out: MessageSendRequest<Body>[] = [];
      for (const m of messages) {
        const n = copies();
        for (let i = 0; i < n; i++) out.push({ ...m, delaySeconds: delay(m.delaySeconds) });
      }
      // Duplicates may take a batch past the Queue's 100 messages.
      for (let i = 0; i < out.length; i += 100) await inner.sendBatch(out.slice(i, i + 100));
    },
  };
  return queue as unknown as Queue<Body>;
}
