import type { Db } from "../../db/create-db.ts";
import { mailbox } from "../../db/schema/webhooks.ts";
import { newId } from "../domain/ids.ts";
import type { FetchLike } from "../http/fetch-like.ts";

export type MailMessage = {
  to: string;
  subject: string;
  text: string;
  /** The notification this e-mail is about; null for account e-mail (a verification link). */
  notificationId: string | null;
  /** Keeps a retried send single at the provider; default `notification-<notificationId>`. */
  idempotencyKey?: string;
};
export type MailResult = { ok: true; id: string } | { ok: false; error: string };

/** Where owner e-mail goes. Failures are values; the caller retries. */
export interface MailProvider {
  send(message: MailMessage, now: Date): Promise<MailResult>;
}

/**
 * Development and tests: a mailbox table in the database, read through
 * `GET /v1/dev/mailbox` (README "Reading e-mail locally").
 */
export function databaseMailbox(db: Db): MailProvider {
  return {
    async send(message, now) {
      const id = newId();
      await db
        .insert(mailbox)
        .values({ id, toAddress: message.to, subject: message.subject, body: message.text, notificationId: message.notificationId, createdAt: now });
      return { ok: true, id };
    },
  };
}

/**
 * Deployments: an HTTP transactional-mail API that takes
 * `POST <MAIL_API_URL>` with `Authorization: Bearer <MAIL_API_KEY>` and a JSON
 * body `{ from, to, subject, text }` (the shape of Resend's and Postmark-like
 * APIs). An idempotency key per notification keeps a retried send single.
 */
export function httpMailProvider(config: { url: string; apiKey: string; from: string; fetch: FetchLike; timeoutMs?: number }): MailProvider {
  return {
    async send(message) {
      try {
        const res = await config.fetch(config.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${config.apiKey}`,
            "idempotency-key": message.idempotencyKey ?? `notification-${message.notificationId}`,
          },
          body: JSON.stringify({ from: config.from, to: message.to, subject: message.subject, text: message.text }),
          signal: AbortSignal.timeout(config.timeoutMs ?? 10_000),
        });
        const text = await res.text();
        if (!res.ok) return { ok: false, error: `HTTP ${res.status}` };
        let id = "";
        try {
          id = String((JSON.parse(text) as { id?: unknown }).id ?? "");
        } catch {
          /* a provider that answers without JSON still accepted the mail */
        }
        return { ok: true, id };
      } catch (err) {
        return { ok: false, error: err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : "send failed" };
      }
    },
  };
}

/** A provider for a deployment that configured none: every send fails visibly on the notification. */
export const unconfiguredMail: MailProvider = {
  async send() {
    return { ok: false, error: "mail is not configured (MAIL_API_URL, MAIL_API_KEY, MAIL_FROM)" };
  },
};

/** The mail settings both mail-sending workers (api: verification links; webhooks: notifications) read. */
export type MailEnv = { ENVIRONMENT: "development" | "production"; MAIL_API_URL?: string; MAIL_API_KEY?: string; MAIL_FROM?: string };

/**
 * The provider a worker uses: the database mailbox in development, the HTTP
 * mail API when configured, else one that fails every send visibly.
 */
export function mailProviderFromEnv(env: MailEnv, db: Db, fetch: FetchLike): MailProvider {
  if (env.ENVIRONMENT === "development") return databaseMailbox(db);
  if (env.MAIL_API_URL && env.MAIL_API_KEY && env.MAIL_FROM)
    return httpMailProvider({ url: env.MAIL_API_URL, apiKey: env.MAIL_API_KEY, from: env.MAIL_FROM, fetch });
  return unconfiguredMail;
}
