import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { widgetPrograms } from "../../db/schema/widget-programs.ts";

/**
 * The domains a TON Connect `signData` signature may name for a widget draw:
 * the widget's own hosts (in the widget the iframe is the TON Connect dApp:
 * EMBED_HOST and the host the request reached, which its manifest names)
 * and the program's allowed origins (a merchant page running TON Connect
 * itself). Origins are reduced to their host by the verifier.
 */
export const widgetDrawDomains = (program: { allowedOrigins: string[] }, widgetHosts: readonly string[]): string[] => [
  ...widgetHosts,
  ...program.allowedOrigins,
];

/**
 * The domains a TON Connect signature may name for an API loan's agreement
 * (`POST /v1/loans/:id/agreement`): the widget host (EMBED_HOST, when the
 * api worker is told it) and the allowed origins of every live widget
 * program of the tenant. An API loan has no program of its own, so the
 * tenant declares the pages it collects signatures on where it already
 * declares its origins; a page of nobody's list cannot have its signatures
 * replayed here.
 */
export async function apiAgreementDomains(db: Db, tenantId: string, widgetHost: string | null | undefined): Promise<string[]> {
  const programs = await db
    .select({ allowedOrigins: widgetPrograms.allowedOrigins })
    .from(widgetPrograms)
    .where(and(eq(widgetPrograms.tenantId, tenantId), isNull(widgetPrograms.deletedAt)));
  return [...(widgetHost ? [widgetHost] : []), ...programs.flatMap((p) => p.allowedOrigins)];
}
