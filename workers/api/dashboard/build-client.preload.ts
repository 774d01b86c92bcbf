import { buildDashboardClient } from "./build-client.ts";

// `bun test` preload (bunfig.toml): the api worker serves the dashboard app from its generated module, so tests write it first.
await buildDashboardClient();
