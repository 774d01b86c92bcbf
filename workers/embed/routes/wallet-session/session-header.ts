import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { hasWalletSession, WALLET_SESSION_HEADER } from "../../../../shared/embed/wallet-session.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";

/** The optional wallet-session header, as the routes that read it document it. */
export const SessionHeaders = z.object({
  [WALLET_SESSION_HEADER]: z.string().max(256).optional().openapi({
    description:
      "A wallet session of this program for this wallet (POST …/wallet-session). Absent: the answer shows nothing of the wallet's own. Present but not valid for this wallet: 401.",
  }),
});

export const SESSION_401 = {
  description: "The x-svc-wallet-session header is not a live session of this program for this wallet (forged, expired, or another wallet's)",
};

/** Whether the request carries a live wallet session for `walletAddress` (absent: false; invalid: 401). */
export function walletSessionOf(c: Context<EmbedAppEnv>, walletAddress: string): Promise<boolean> {
  const program = c.get("program");
  const deps = c.get("deps");
  const token = c.req.header(WALLET_SESSION_HEADER);
  return hasWalletSession(deps, { program, token, walletAddress, now: tenantClock(deps.clock, program.tenant, program.mode).now() });
}
