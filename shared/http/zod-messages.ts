import { z } from "zod";

/**
 * zod's messages for a field that is missing from a body or query: "is required", with what it takes, rather than
 * "Invalid input: expected string, received undefined" or, for an enum, "Invalid option: expected one of …", which
 * read as if a wrong value had been sent. Installed once, by importing this module (shared/http/errors.ts does, so
 * every worker's validation has it); other messages stay zod's own.
 */
z.config({
  customError: (issue) => {
    if (issue.input !== undefined || !issue.path?.length) return undefined;
    if (issue.code === "invalid_type") return `is required (expected ${issue.expected})`;
    if (issue.code === "invalid_value") return `is required (one of ${issue.values.map((v) => JSON.stringify(v)).join("|")})`;
    return "is required";
  },
});
