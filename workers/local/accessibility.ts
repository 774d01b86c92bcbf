import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Frame } from "playwright-core";
import { REPO_ROOT } from "./wrangler-config.ts";

const AXE_SOURCE = readFileSync(join(REPO_ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: string[] };

/**
 * Runs axe-core (WCAG 2.1 A and AA rules: labels, names, contrast, landmarks,
 * ARIA) in a frame, as it is now, and returns the violations. The script is
 * evaluated through the DevTools protocol, which a page's CSP does not
 * govern, so the page is checked with its real headers.
 */
export async function axeViolations(frame: Frame): Promise<AxeViolation[]> {
  await frame.evaluate(AXE_SOURCE);
  return frame.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const result = await axe.run((globalThis as any).document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => n.target.join(" ")) }));
  });
}
