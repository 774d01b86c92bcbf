import type { WidgetMessage } from "./boot.ts";

/**
 * The widget's channel to the page that frames it: messages go to the
 * parent's exact origin only (never "*"), and only messages from that origin
 * are read. With no known parent (not framed, or `?parent=` not one of the
 * program's origins) nothing is posted.
 */
export function parentChannel(parentOrigin: string | null) {
  const target = window.parent !== window && parentOrigin ? window.parent : null;
  const post = (message: WidgetMessage) => target?.postMessage(message, parentOrigin!);
  return {
    post,
    /** Calls `handler` for `{ type }` messages from the parent's origin. */
    on(type: string, handler: () => void): () => void {
      const listener = (event: MessageEvent) => {
        if (!target || event.origin !== parentOrigin || event.source !== target) return;
        if (event.data && typeof event.data === "object" && (event.data as { type?: unknown }).type === type) handler();
      };
      window.addEventListener("message", listener);
      return () => window.removeEventListener("message", listener);
    },
    /** Keeps the parent's iframe as tall as the widget (`svc:resize`). */
    autoResize(): void {
      if (!target) return;
      let last = 0;
      const send = () => {
        const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
        if (height !== last) post({ type: "svc:resize", height: (last = height) });
      };
      new ResizeObserver(send).observe(document.documentElement);
      send();
    },
  };
}

export type ParentChannel = ReturnType<typeof parentChannel>;
