import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { createEmbedApp } from "./app.ts";
import { embedDepsOfIsolate } from "./deps.ts";
import { withRequiredSecrets } from "../../shared/config/required-secrets.ts";
import { type EmbedEnv, REQUIRED_SECRETS } from "./env.ts";

const app = createEmbedApp(embedDepsOfIsolate);

export default withRequiredSecrets(REQUIRED_SECRETS, {
  fetch: (request, env, ctx) => app.fetch(request, withChaos(env, "embed"), ctx),
} satisfies ExportedHandler<EmbedEnv>);
