import { LIVE_CHAIN_ENV_KEYS } from "../../../shared/chains/live/live-config.ts";

/**
 * Env properties a deploy may leave unset, per worker: they need no binding,
 * `[vars]` entry or `secrets.required` name (the deploy check's rule 4), but
 * must be optional (`?`) in the worker's Env type. Everything else the Env
 * type names must be declared in the worker's config.
 *
 * A setting that moves into `[vars]` or `secrets.required` is then declared,
 * and the check asks for it to be dropped here (a note, not a failure).
 */
export const OPTIONAL_SETTINGS: Record<string, readonly string[]> = {
  api: [
    // Unset: no operator access at all.
    "OPERATOR_KEY",
    // Written by `npm run configure`; unset, the routes that e-mail a link answer 503 (locally, under development, they use the request's origin).
    "BASE_URL",
    // Live chains (README "Live chains"): a chain without its variables is not configured.
    ...LIVE_CHAIN_ENV_KEYS,
  ],
  embed: [],
  // SECRETS_KEY opens the operator's sealed signers; the cron worker's live funding runs in the api's loan objects.
  cron: ["SECRETS_KEY", ...LIVE_CHAIN_ENV_KEYS],
  webhooks: [],
};
