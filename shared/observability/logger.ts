/**
 * Structured JSON log lines. Callers pass only identifiers and outcomes:
 * never request bodies, headers, keys, tokens, passwords or secrets.
 */
export type Logger = {
  info(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
};

export const consoleLogger: Logger = {
  info: (msg, fields) => console.log(JSON.stringify({ level: "info", msg, ...fields })),
  error: (msg, fields) => console.error(JSON.stringify({ level: "error", msg, ...fields })),
};

/**
 * What may be logged of an unexpected error: its name, message, cause and
 * stack frames, with the bound parameters of a failed query removed (drizzle
 * puts them in the message, and they can hold hashes, e-mails or keys).
 */
export function safeErrorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { error: typeof err };
  const scrub = (message: string) => message.replace(/\nparams:[\s\S]*$/, "\nparams: [redacted]");
  const cause = err.cause instanceof Error ? `${err.cause.name}: ${scrub(err.cause.message)}` : undefined;
  const frames = (err.stack ?? "")
    .split("\n")
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 10)
    .join("\n");
  return { name: err.name, error: scrub(err.message), ...(cause ? { cause } : {}), stack: frames };
}
