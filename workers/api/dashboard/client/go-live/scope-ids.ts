/**
 * Makes the ids inside `root` unique by suffixing them (and the `for` and
 * `aria-describedby` that point at them): `field()` names ids after the
 * field, and this page repeats a form per wallet.
 */
export function scopeIds(root: HTMLElement, suffix: string): void {
  const safe = suffix.replace(/[^a-z0-9]/gi, "-");
  for (const node of root.querySelectorAll<HTMLElement>("[id]")) node.id = `${node.id}-${safe}`;
  for (const label of root.querySelectorAll<HTMLLabelElement>("label[for]")) label.htmlFor = `${label.htmlFor}-${safe}`;
  for (const node of root.querySelectorAll<HTMLElement>("[aria-describedby]"))
    node.setAttribute(
      "aria-describedby",
      node
        .getAttribute("aria-describedby")!
        .split(" ")
        .map((id) => `${id}-${safe}`)
        .join(" "),
    );
}
