import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { createEmbedApp } from "./app.ts";
import { embedDepsFromEnv } from "./deps.ts";
import type { EmbedEnv } from "./env.ts";

const app = createEmbedApp(embedDepsFromEnv);

export default {
  fetch: (request, env, ctx) => app.fetch(request, withChaos(env, "embed"), ctx),
} satisfies ExportedHandler<EmbedEnv>;
