/** Attributes of `el()`: strings become attributes, functions listeners (`onclick`), booleans toggle. */
type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;
type Child = Node | string | null | undefined | false;

/**
 * A DOM element with attributes and children. Text is always set as text
 * (never HTML), so branding and API strings cannot inject markup.
 */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/**
 * Shows one step of the flow in `root`: a section labelled by its heading,
 * which takes the focus so keyboard and screen-reader users land on the new
 * step (focus order then follows the document).
 */
export function showStep(root: HTMLElement, id: string, title: string, ...content: Child[]): HTMLElement {
  const heading = el("h2", { id: `${id}-title`, tabindex: -1 }, title);
  const section = el("section", { "aria-labelledby": `${id}-title`, "data-step": id }, heading, ...content);
  root.replaceChildren(section);
  heading.focus();
  return section;
}

/** A polite live region's text (status updates announced without moving focus). */
export function announce(region: HTMLElement, text: string): void {
  region.textContent = text;
}
