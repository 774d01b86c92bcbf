import { fileURLToPath } from "node:url";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/**
 * The code of the fenced block that follows `<!-- example: <name> -->` in
 * README.md, dedented by the fence's own indentation (blocks inside list
 * items are indented). Tests run these blocks as they are, so the README
 * cannot drift from code that works. Exactly one such marker must exist.
 */
export async function readmeCode(name: string): Promise<string> {
  const text = await Bun.file(README).text();
  const marker = `<!-- example: ${name} -->`;
  const at = text.indexOf(marker);
  if (at < 0 || text.indexOf(marker, at + 1) >= 0) throw new Error(`README.md must hold exactly one ${marker}`);
  const match = /^[ \t]*\n?([ \t]*)```[\w-]*\n([\s\S]*?)\n[ \t]*```/.exec(text.slice(at + marker.length));
  if (!match) throw new Error(`no fenced code block right after ${marker}`);
  const indent = match[1]!;
  return `${match[2]!
    .split("\n")
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
    .join("\n")}\n`;
}
