import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import * as createApiKey from "./routes/api-keys/create-api-key.ts";
import * as listApiKeys from "./routes/api-keys/list-api-keys.ts";
import * as revokeApiKey from "./routes/api-keys/revoke-api-key.ts";
import * as logIn from "./routes/auth/log-in.ts";
import * as signUp from "./routes/auth/sign-up.ts";
import * as getHealth from "./routes/health/get-health.ts";
import * as getMe from "./routes/me/get-me.ts";
import * as createUser from "./routes/users/create-user.ts";

/** Every route of the api worker. One module per operation, each exporting `route` and `register`. */
export const ROUTES: ((app: OpenAPIHono<AppEnv>) => unknown)[] = [
  getHealth.register,
  signUp.register,
  logIn.register,
  getMe.register,
  createUser.register,
  createApiKey.register,
  listApiKeys.register,
  revokeApiKey.register,
];
