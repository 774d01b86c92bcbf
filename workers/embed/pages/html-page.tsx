/** @jsxImportSource hono/jsx */
import { raw } from "hono/html";
import type { Child } from "hono/jsx";

/**
 * A widget-host page's frame: the doctype (without one a browser renders in
 * quirks mode), `<html lang="en">`, and a head that starts with the charset
 * and the viewport, then `head`; `children` is the body.
 */
export function HtmlPage({ head, children }: { head: Child; children: Child }) {
  return (
    <>
      {raw("<!doctype html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          {head}
        </head>
        {children}
      </html>
    </>
  );
}
