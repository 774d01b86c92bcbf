import { createHmac } from "node:crypto";

/**
 * A webhook receiver in this process: checks each request's `x-svc-signature`
 * against the endpoint's secret (set once registered), and keeps the first
 * arrival of each event id with the time `startOf(envelope)` says it left.
 */
export function signedReceiver(startOf: (envelope: { id: string; createdAt: string }, arrivedAt: number) => number) {
  const arrivals = new Map<string, { createdAt: number; arrivedAt: number }>();
  const state = { requests: 0, badSignatures: 0, secret: "" };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const arrivedAt = Date.now();
      const raw = await req.text();
      state.requests++;
      if (req.headers.get("x-svc-signature") !== createHmac("sha256", state.secret).update(raw).digest("hex")) state.badSignatures++;
      const envelope = JSON.parse(raw) as { id: string; createdAt: string };
      if (!arrivals.has(envelope.id)) arrivals.set(envelope.id, { createdAt: startOf(envelope, arrivedAt), arrivedAt });
      return new Response(null, { status: 204 });
    },
  });
  return { arrivals, state, server };
}
