import { describe, expect, test } from "bun:test";
import { sign } from "hono/jwt";
import { generateApiKey, generateEmbedKey, hashApiKey } from "./api-keys.ts";
import { DUMMY_HASH, hashPassword, PBKDF2_ITERATIONS, timingSafeEqual, verifyPassword } from "./passwords.ts";
import { issueSessionToken, verifySessionToken } from "./session-tokens.ts";

describe("passwords", () => {
  test("PBKDF2 at workerd's cap with a per-user salt", async () => {
    const a = await hashPassword("correct horse battery");
    const b = await hashPassword("correct horse battery");
    expect(a.iterations).toBe(PBKDF2_ITERATIONS);
    expect(PBKDF2_ITERATIONS).toBeLessThanOrEqual(100_000);
    expect(a.salt).not.toBe(b.salt);
    expect(a.hash).not.toBe(b.hash);
    expect(await verifyPassword("correct horse battery", a)).toBe(true);
    expect(await verifyPassword("correct horse batterY", a)).toBe(false);
  });
  test("the dummy hash decodes and matches nothing guessable", async () => {
    expect(await verifyPassword("", DUMMY_HASH)).toBe(false);
    expect(await verifyPassword("password1234", DUMMY_HASH)).toBe(false);
  });
  test("timingSafeEqual", () => {
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2]))).toBe(false);
    expect(timingSafeEqual(new Uint8Array([]), new Uint8Array([]))).toBe(true);
  });
});

describe("api keys", () => {
  test("mode prefix, entropy, prefix shown in lists", () => {
    const { key, prefix } = generateApiKey("sandbox");
    expect(key).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
    expect(key.startsWith(prefix)).toBe(true);
    expect(prefix.length).toBe(13);
    expect(generateApiKey("live").key).toStartWith("svc_live_");
    expect(generateEmbedKey("sandbox")).toMatch(/^ek_test_[0-9A-Za-z]{24}$/);
  });
  test("the stored hash is SHA-256 hex of the key", async () => {
    const h = await hashApiKey("svc_test_abc");
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).toBe(new Bun.CryptoHasher("sha256").update("svc_test_abc").digest("hex"));
  });
});

describe("session tokens", () => {
  const secret = "s".repeat(40);
  const user = { id: crypto.randomUUID(), tenantId: crypto.randomUUID(), role: "ADMIN" as const, sessionVersion: 0 };
  test("round trip", async () => {
    const now = new Date();
    const { accessToken, expiresAt } = await issueSessionToken(user, secret, now, 3600);
    expect(expiresAt.getTime()).toBe(Math.floor(now.getTime() / 1000) * 1000 + 3_600_000);
    const claims = await verifySessionToken(accessToken, secret);
    expect(claims).toMatchObject({ sub: user.id, tid: user.tenantId, role: "ADMIN" });
  });
  test("expired, forged, other-secret and garbage tokens are null", async () => {
    const past = new Date(Date.now() - 2 * 3600_000);
    const expired = await issueSessionToken(user, secret, past, 3600);
    expect(await verifySessionToken(expired.accessToken, secret)).toBeNull();
    const good = await issueSessionToken(user, secret, new Date(), 3600);
    expect(await verifySessionToken(good.accessToken, "t".repeat(40))).toBeNull();
    const [h, , s] = good.accessToken.split(".");
    const forged = btoa(JSON.stringify({ sub: user.id, tid: user.tenantId, role: "OWNER", exp: 9e9 })).replace(/=+$/, "");
    expect(await verifySessionToken(`${h}.${forged}.${s}`, secret)).toBeNull();
    expect(await verifySessionToken("garbage", secret)).toBeNull();
    const none = `${btoa(JSON.stringify({ alg: "none", typ: "JWT" })).replace(/=+$/, "")}.${forged}.`;
    expect(await verifySessionToken(none, secret)).toBeNull();
  });
  test("a token signed with the right secret but without an expiry is null: a session always expires", async () => {
    const iat = Math.floor(Date.now() / 1000);
    const claims = { sub: user.id, tid: user.tenantId, role: "ADMIN", iat };
    expect(await verifySessionToken(await sign(claims, secret, "HS256"), secret)).toBeNull();
    expect(await verifySessionToken(await sign({ ...claims, exp: "9999999999" } as never, secret, "HS256"), secret)).toBeNull();
    // Control: the same claims with an expiry are a session.
    expect(await verifySessionToken(await sign({ ...claims, exp: iat + 60 }, secret, "HS256"), secret)).toMatchObject({ sub: user.id });
  });
  test("a session version that is no whole number is null, even signed with the right secret; issued tokens carry the user's", async () => {
    const iat = Math.floor(Date.now() / 1000);
    const claims = { sub: user.id, tid: user.tenantId, role: "ADMIN", iat, exp: iat + 60 };
    for (const sv of [1.5, "0", "1", null, true, [1], {}, 2 ** 53]) {
      expect(await verifySessionToken(await sign({ ...claims, sv } as never, secret, "HS256"), secret)).toBeNull();
    }
    expect(await verifySessionToken(await sign({ ...claims, sv: 3 }, secret, "HS256"), secret)).toMatchObject({ sv: 3 });
    const issued = await issueSessionToken({ ...user, sessionVersion: 7 }, secret, new Date(), 60);
    expect(await verifySessionToken(issued.accessToken, secret)).toMatchObject({ sub: user.id, sv: 7 });
  });
});
