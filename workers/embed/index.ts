import { createEmbedApp } from "./app.ts";
import { embedDepsFromEnv } from "./deps.ts";
import type { EmbedEnv } from "./env.ts";

const app = createEmbedApp(embedDepsFromEnv);

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<EmbedEnv>;
