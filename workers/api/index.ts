import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { createApiApp } from "./app.ts";
import { depsFromEnv, type ApiEnv } from "./deps.ts";

export { AgreementChallengeObject } from "../../shared/agreements/challenge-object.ts";
export { EvmSenderObject } from "../../shared/chains/evm/live/evm-sender-object.ts";
export { SimulatedChainObject } from "../../shared/chains/simulated/simulated-chain-object.ts";
export { LoanObject } from "../../shared/loans/loan-object.ts";

const app = createApiApp(depsFromEnv);

export default {
  fetch: (request, env, ctx) => app.fetch(request, withChaos(env, "api"), ctx),
} satisfies ExportedHandler<ApiEnv>;
