import { expect, test } from "bun:test";
import type { Page } from "./context.ts";
import { BASE, borrowerPath, match } from "./router.ts";

/** What a click on a link to `path` (under /dashboard) leads to: the browser resolves the href (WHATWG URL), the router matches it. */
function follow(path: string) {
  const resolved = new URL(`${BASE}${path}`, "https://dashboard.example").pathname;
  const pages = [{ path: "/borrowers/:id" }, { path: "/borrowers" }, { path: "/" }] as Page[];
  return { resolved, route: match(pages, resolved.slice(BASE.length) || "/") };
}

const borrowerId = "6f1c2a9e-0b7d-4e3a-9c1f-2d4b5a6c7e8f";

test("a borrower's link leads to its page, whatever its ref, and the page is given what identifies that borrower", () => {
  for (const borrowerRef of ["user-42", "a/b", "a b?c#d", "%2e", "...", ".hidden", "x/.."]) {
    const { route } = follow(borrowerPath({ borrowerRef, borrowerId }));
    expect(route?.page.path).toBe("/borrowers/:id");
    expect(route?.params).toEqual({ id: borrowerRef });
  }
});

test('a ref of "." or "..", which a URL would resolve away (to /borrowers or the home page), goes by the borrower\'s id', () => {
  expect(follow(`/borrowers/${encodeURIComponent("..")}`).resolved).toBe(`${BASE}/`);
  for (const borrowerRef of [".", ".."]) {
    const { resolved, route } = follow(borrowerPath({ borrowerRef, borrowerId }));
    expect(resolved).toBe(`${BASE}/borrowers/${borrowerId}`);
    expect(route?.page.path).toBe("/borrowers/:id");
    expect(route?.params).toEqual({ id: borrowerId });
  }
});
