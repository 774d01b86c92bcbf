import type { Principal } from "../../shared/auth/principal.ts";
import type { ApiDeps, ApiEnv } from "./deps.ts";

/** Hono's typed environment for the api worker. */
export type AppEnv = {
  Bindings: ApiEnv;
  Variables: {
    deps: ApiDeps;
    principal: Principal;
    requestId: string;
  };
};
