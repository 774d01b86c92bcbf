import { expect, test } from "bun:test";
import { ERROR_KINDS, errorBodyForStatus, rateLimited, toErrorBody, validationError, type ErrorKind } from "./errors.ts";
import { DomainError } from "./errors.ts";

test("every kind maps to the spec's body", () => {
  for (const kind of Object.keys(ERROR_KINDS) as ErrorKind[]) {
    const body = toErrorBody(new DomainError(kind, "x"));
    expect(body).toEqual({ statusCode: ERROR_KINDS[kind].status, message: "x", error: ERROR_KINDS[kind].name });
  }
});

test("validation errors keep one message per field", () => {
  expect(toErrorBody(validationError(["a: bad", "b: bad"]))).toEqual({
    statusCode: 400,
    message: ["a: bad", "b: bad"],
    error: "Bad Request",
  });
});

test("rate limited carries Retry-After in whole seconds", () => {
  expect(rateLimited(59.2).headers["Retry-After"]).toBe("60");
  expect(rateLimited(0).headers["Retry-After"]).toBe("1");
});

test("bodies for framework statuses", () => {
  expect(errorBodyForStatus(404, "no")).toEqual({ statusCode: 404, message: "no", error: "Not Found" });
  expect(errorBodyForStatus(418, "tea")).toEqual({ statusCode: 418, message: "tea", error: "Error" });
});
