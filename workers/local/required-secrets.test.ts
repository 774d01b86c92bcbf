import { describe, expect, test } from "bun:test";
import { REQUIRED_SECRETS as API } from "../api/deps.ts";
import { REQUIRED_SECRETS as EMBED } from "../embed/env.ts";
import { REQUIRED_SECRETS as WEBHOOKS } from "../webhooks/env.ts";
import { readWranglerConfig, WORKERS } from "./wrangler-config.ts";

describe("required secrets: the code checks what the configs declare", () => {
  test("each worker's REQUIRED_SECRETS equals its wrangler config's [secrets] required", () => {
    const inCode: Record<string, readonly string[]> = { api: API, embed: EMBED, webhooks: WEBHOOKS, cron: [] };
    for (const { key, config } of WORKERS) {
      expect({ key, required: [...(readWranglerConfig(config).secrets?.required ?? [])].sort() }).toEqual({ key, required: [...inCode[key]!].sort() });
    }
  });
});
