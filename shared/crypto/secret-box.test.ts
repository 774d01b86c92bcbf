import { expect, test } from "bun:test";
import { openSecret, sealSecret } from "./secret-box.ts";

test("a sealed secret opens with its key, again and again, and never with another (the derived keys are kept per key)", async () => {
  const sealed = await sealSecret("whsec_one", "key-a");
  expect(sealed).toMatch(/^v1\.[^.]+\.[^.]+$/);
  expect(sealed).not.toContain("whsec_one");
  for (let i = 0; i < 3; i++) expect(await openSecret(sealed, "key-a")).toBe("whsec_one");
  // key-a's derived key is kept: key-b must still derive its own.
  await expect(openSecret(sealed, "key-b")).rejects.toThrow();
  const other = await sealSecret("whsec_two", "key-b");
  expect(await openSecret(other, "key-b")).toBe("whsec_two");
  await expect(openSecret(other, "key-a")).rejects.toThrow();
  // More keys than are kept: the kept ones are cleared, and each still opens only its own.
  for (const k of ["key-c", "key-d", "key-e", "key-f"]) expect(await openSecret(await sealSecret(k, k), k)).toBe(k);
  expect(await openSecret(sealed, "key-a")).toBe("whsec_one");
  await expect(openSecret(sealed, "key-f")).rejects.toThrow();
});

test("a sealed secret in an unknown format is refused", async () => {
  await expect(openSecret("v2.aaaa.bbbb", "key-a")).rejects.toThrow("unknown sealed-secret format");
  await expect(openSecret("v1.aaaa", "key-a")).rejects.toThrow("unknown sealed-secret format");
});
