import { buildDocsAssets } from "./build-assets.ts";

// `bun test` preload (bunfig.toml): the api worker serves the docs page's assets
// from their generated module, so tests write it first (a copy of a few files;
// unchanged output is not rewritten).
await buildDocsAssets();
