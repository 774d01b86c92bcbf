import { copyButton, el } from "../dom.ts";

/** The widget channels a snippet can name (`data-channel`; the loan records it). */
export const CHANNELS = ["WEB", "IOS", "ANDROID", "PARTNER_WEBVIEW"] as const;

/**
 * The exact tag a merchant pastes (README "The widget"; widget.js reads
 * `data-embed-key` and `data-channel` from it and mounts the iframe after it).
 */
export const widgetSnippet = (widgetOrigin: string, embedKey: string, channel: string): string =>
  `<script src="${widgetOrigin}/widget.js" data-embed-key="${embedKey}" data-channel="${channel}"></script>`;

/** One program's snippets, one per channel, each with a copy button. */
export function snippets(widgetOrigin: string | null, program: { name: string; embedKey: string }): HTMLElement {
  if (!widgetOrigin) return el("p", { class: "hint" }, "No widget host is configured for this deployment.");
  return el(
    "details",
    { class: "snippets" },
    el("summary", {}, `Embed snippets for "${program.name}"`),
    ...CHANNELS.map((channel) => {
      const text = widgetSnippet(widgetOrigin, program.embedKey, channel);
      return el(
        "div",
        { class: "snippet", "data-channel": channel },
        el("p", { class: "snippet-label" }, channel),
        el("pre", {}, el("code", {}, text)),
        copyButton(text, `Copy the ${channel} snippet`),
      );
    }),
  );
}
