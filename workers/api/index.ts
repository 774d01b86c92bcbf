import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { countRoundTrips, newRoundTripCounter, ROUND_TRIPS_HEADER, withRoundTripCount } from "../../shared/observability/round-trips.ts";
import { createApiApp } from "./app.ts";
import { withRequiredSecrets } from "../../shared/config/required-secrets.ts";
import { type ApiEnv, depsOfIsolate, REQUIRED_SECRETS } from "./deps.ts";

export { AgreementChallengeObject } from "../../shared/agreements/challenge-object.ts";
export { EvmSenderObject } from "../../shared/chains/evm/live/evm-sender-object.ts";
export { SimulatedChainObject } from "../../shared/chains/simulated/simulated-chain-object.ts";
export { LoanObject } from "../../shared/loans/loan-object.ts";

const app = createApiApp(depsOfIsolate);

export default withRequiredSecrets(REQUIRED_SECRETS, {
  async fetch(request, env, ctx) {
    const chaotic = withChaos(env, "api");
    // The bench (development only): the request's D1 round trips and Durable Object calls, in a response header, when it asks.
    const counted = request.headers.has(ROUND_TRIPS_HEADER) ? withRoundTripCount(chaotic) : null;
    if (!counted) return app.fetch(request, chaotic, ctx);
    const counter = newRoundTripCounter();
    const response = await countRoundTrips(counter, () => app.fetch(request, counted, ctx));
    const out = new Response(response.body, response);
    out.headers.set(ROUND_TRIPS_HEADER, JSON.stringify(counter));
    return out;
  },
} satisfies ExportedHandler<ApiEnv>);
