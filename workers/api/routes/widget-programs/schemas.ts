import { z } from "@hono/zod-openapi";
import { plainText } from "../../../../shared/schemas/plain-text.ts";
import { allowedOriginsProblems, MAX_ALLOWED_ORIGINS } from "../../../../shared/domain/origins.ts";
import { TENANT_MODES } from "../../../../shared/domain/rails.ts";

const AllowedOriginsSchema = z
  .array(z.string())
  .max(MAX_ALLOWED_ORIGINS, `at most ${MAX_ALLOWED_ORIGINS} origins`)
  .superRefine((origins, ctx) => {
    for (const p of allowedOriginsProblems(origins)) ctx.addIssue({ code: "custom", path: [p.index], message: p.message });
  })
  .openapi({
    description: `Up to ${MAX_ALLOWED_ORIGINS} exact origins that may embed the widget: \`https://host[:port]\` (lowercase host, no path, query, trailing slash, default port, credentials or wildcard), plus \`http://localhost[:port]\` and \`http://127.0.0.1[:port]\` for local development. Repeats are rejected. An empty list lets no page embed the widget.`,
    example: ["https://shop.example.com", "http://localhost:3000"],
  });

/** The body of POST and PUT /v1/widget-programs (PUT replaces all three; the embed key never changes). */
const programTerms = {
  name: plainText(100).openapi({ example: "Checkout widget" }),
  merchantConfigId: z.uuid().openapi({ description: "One of the tenant's merchant configurations; the program lends with its rail and loan product." }),
  allowedOrigins: AllowedOriginsSchema,
};

export const WidgetProgramBodySchema = z.object(programTerms).openapi("WidgetProgramRequest");

/** POST adds the program's mode, fixed for its life (its embed key's prefix). */
export const CreateWidgetProgramBodySchema = z
  .object({
    ...programTerms,
    mode: z.enum(TENANT_MODES).optional().openapi({
      description:
        "The program's mode, fixed for its life: `sandbox` (the default; embed key `ek_test_…`, lends on the rail's sandbox chain) or `live` (`ek_live_…`, lends on the live chain; a tenant not yet certified gets 403, as for live API keys).",
    }),
  })
  .openapi("CreateWidgetProgramRequest");
