/** Attributes of `el()`: strings become attributes, functions listeners (`onclick`), booleans toggle. */
export type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;
export type Child = Node | string | number | null | undefined | false;

/**
 * A DOM element with attributes and children. Text is always set as text
 * (never HTML), so API strings (names, notes, branding) cannot inject markup.
 */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat())
    if (child !== null && child !== undefined && child !== false) node.append(typeof child === "number" ? String(child) : child);
  return node;
}

/** A page's main section: an h1 that takes the focus on navigation, then the content. */
export function pageSection(title: string, ...content: (Child | Child[])[]): HTMLElement {
  return el("section", { class: "page", "aria-labelledby": "page-title" }, el("h1", { id: "page-title", tabindex: -1 }, title), ...content);
}

/** A button that copies `text` to the clipboard and says so. */
export function copyButton(text: string, label = "Copy"): HTMLButtonElement {
  const button = el("button", { type: "button", class: "secondary" }, label);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => (button.textContent = label), 2_000);
  });
  return button;
}

/**
 * A table with a caption, header row and rows of cells (text or nodes); an
 * empty list says so. A narrow screen scrolls it in its own box, a named
 * region that takes the keyboard's focus so it can be scrolled without a
 * mouse.
 */
export function table(caption: string, headers: string[], rows: Child[][], empty = "Nothing yet."): HTMLElement {
  if (rows.length === 0) return el("p", { class: "empty" }, empty);
  return el(
    "div",
    { class: "table-wrap", role: "region", "aria-label": caption, tabindex: 0 },
    el(
      "table",
      {},
      el("caption", {}, caption),
      el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((cell) => el("td", {}, cell))))),
    ),
  );
}

/** A date of an API time on the UTC calendar (the day a UTC midnight starts). */
export const utcDate = (iso: string): string => new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium", timeZone: "UTC" });

/** A short date and time in the browser's locale. */
export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "—";
