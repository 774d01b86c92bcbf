/** The shapes the Developers page reads from `/v1` (as the OpenAPI document gives them). */
export type ApiKey = {
  id: string;
  name: string;
  prefix: string;
  mode: "sandbox" | "live";
  createdAt: string;
  revokedAt: string | null;
  /** Null: created by a user since removed, or by no dashboard user. */
  createdBy: { userId: string; email: string } | null;
};
/** The create answer: the key's fields, its secret, and neither `revokedAt` nor `createdBy`. */
export type CreatedApiKey = Omit<ApiKey, "revokedAt" | "createdBy"> & { key: string };

export type WebhookEndpoint = {
  id: string;
  url: string;
  events: string[];
  mode: "sandbox" | "live";
  secretPrefix: string;
  createdAt: string;
  pausedUntil: string | null;
};
export type CreatedWebhookEndpoint = WebhookEndpoint & { secret: string };

export type DeliveryAttempt = {
  attempt: number;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  responseStatus: number | null;
  error: string | null;
};
export type Delivery = {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  url: string;
  status: "PENDING" | "SUCCEEDED" | "FAILED";
  attemptCount: number;
  nextAttemptAt: string | null;
  redeliveryOf: string | null;
  createdAt: string;
  attempts: DeliveryAttempt[];
};

export type EventEnvelope = {
  id: string;
  type: string;
  createdAt: string;
  mode: string;
  data: Record<string, unknown>;
  program: string | null;
  channel: string | null;
};
