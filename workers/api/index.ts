import { createApiApp } from "./app.ts";
import { depsFromEnv, type ApiEnv } from "./deps.ts";

const app = createApiApp(depsFromEnv);

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<ApiEnv>;
