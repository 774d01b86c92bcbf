import { buildClient } from "./build-client.ts";

// `bun test` preload (bunfig.toml): the embed worker serves the widget app from
// its generated module, so tests build it first (about 0.1 s; unchanged
// output is not rewritten).
await buildClient();
