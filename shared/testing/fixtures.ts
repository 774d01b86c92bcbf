import type { Role } from "../../db/schema/users.ts";
import type { TestApp } from "./harness.ts";

export const PASSWORD = "correct horse battery staple";

let counter = 0;
export const uniqueEmail = (label = "owner") => `${label}.${Date.now()}.${++counter}@merchant.example`;

/** Signs up a tenant and returns its owner's session. */
export async function signUpTenant(t: TestApp, companyName = "Acme Pay") {
  const email = uniqueEmail();
  const res = await t.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, token: res.body.accessToken as string, tenantId: res.body.tenant.id as string, userId: res.body.user.id as string };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Adds a user with `role` through the API and logs them in. */
export async function addUserWithRole(t: TestApp, ownerToken: string, role: Role) {
  const email = uniqueEmail(role.toLowerCase());
  const created = await t.request("POST", "/v1/users", { body: { email, password: PASSWORD, role }, headers: bearer(ownerToken) });
  if (created.status !== 201) throw new Error(`add user failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await t.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
  return { id: created.body.id as string, email, token: login.body.accessToken as string };
}

/** Creates an API key with the owner's session; returns the secret and its id. */
export async function createKey(t: TestApp, ownerToken: string, name = "backend") {
  const res = await t.request("POST", "/v1/api-keys", { body: { name }, headers: bearer(ownerToken) });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, key: res.body.key as string };
}
