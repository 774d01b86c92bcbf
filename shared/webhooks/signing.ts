/**
 * Delivery signatures (SPEC.md "Events", and Standard Webhooks so receivers
 * can reject replays):
 * - `x-svc-signature`: lowercase hex HMAC-SHA256 of the exact raw body, keyed
 *   with the endpoint's secret (its UTF-8 bytes);
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`.
 *   Per the Standard Webhooks spec the key is the base64 part of a `whsec_`
 *   secret, decoded.
 */
const encoder = new TextEncoder();

async function hmac(key: Uint8Array<ArrayBuffer>, data: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, encoder.encode(data)));
}

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
const base64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));

/** `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${base64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** The Standard Webhooks key: the decoded base64 after `whsec_`. */
export function standardWebhooksKey(secret: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
}

export async function signWebhookBody(secret: string, body: string): Promise<string> {
  return hex(await hmac(encoder.encode(secret), body));
}

export async function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  return `v1,${base64(await hmac(standardWebhooksKey(secret), `${id}.${timestampSeconds}.${body}`))}`;
}

/** Every header of a delivery. `webhook-id` is the event id: the same on every attempt. */
export async function deliveryHeaders(input: {
  secret: string;
  eventId: string;
  eventType: string;
  deliveryId: string;
  body: string;
  now: Date;
}): Promise<Record<string, string>> {
  const timestamp = Math.floor(input.now.getTime() / 1000);
  // Both signatures at once: each is an import and a sign, whose results come back on later turns of the event loop.
  const [signature, standard] = await Promise.all([
    signWebhookBody(input.secret, input.body),
    standardWebhookSignature(input.secret, input.eventId, timestamp, input.body),
  ]);
  return {
    "content-type": "application/json",
    "user-agent": "svc-credit-webhooks/1",
    "x-svc-event": input.eventType,
    "x-svc-signature": signature,
    "x-svc-delivery": input.deliveryId,
    "webhook-id": input.eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": standard,
  };
}
