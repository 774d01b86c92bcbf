import { createEmbedApp } from "./app.ts";
import type { EmbedEnv } from "./env.ts";

const app = createEmbedApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<EmbedEnv>;
