/**
 * Text that people read where it cannot be told apart from what the service
 * wrote around it: a borrower reference in the dashboard, notifications and
 * e-mails; a merchant's name in the message a wallet signs. Such text holds
 * none of these:
 * - control characters (C0, DEL, C1): a newline would add a line of its own
 *   to a signed agreement;
 * - the line and paragraph separators U+2028 and U+2029, which are line
 *   breaks too;
 * - bidirectional formatting (the marks U+200E, U+200F, U+061C, the embeddings
 *   and overrides U+202A–U+202E, the isolates U+2066–U+2069): they make one
 *   text look like another;
 * - invisible formatting characters (U+00AD, U+180E, U+200B–U+200D, U+2060–
 *   U+2064, U+206A–U+206F, U+FEFF, U+FFF9–U+FFFB): "INV-\u200B123" would read
 *   as "INV-123".
 *
 * Plain character ranges rather than `\p{Cc}`: the OpenAPI pattern made of
 * them must work in every client's regex engine.
 */
const REFUSED = "\\u0000-\\u001F\\u007F-\\u009F\\u00AD\\u061C\\u180E\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u206F\\uFEFF\\uFFF9-\\uFFFB";
export const PLAIN_TEXT_PATTERN = new RegExp(`^[^${REFUSED}]*$`);
export const PLAIN_TEXT_RULE = "must not contain control, invisible or bidirectional formatting characters, or line separators";
const NOT_PLAIN = new RegExp(`[${REFUSED}]`, "g");

/**
 * `text` on one line and as it reads: each character the rule refuses
 * replaced by a space. For text stored before the
 * rule, where it goes into a message that is signed.
 *
 * @example oneLine("Evil\nAmount: 1.00 USDC") // "Evil Amount: 1.00 USDC"
 */
export const oneLine = (text: string): string => text.replace(NOT_PLAIN, " ");

/** `text` on one line (`oneLine`) with each run of spaces of any width one ASCII space, trimmed. */
const flat = (text: string): string =>
  oneLine(text)
    .replace(/\p{Zs}+/gu, " ")
    .trim();

/**
 * The merchant a borrower sees named: the branding's company name, else the
 * tenant's name; on one line, each run of spaces of any width (`\p{Zs}`, e.g.
 * U+2003 EM SPACE) one ASCII space, so a name cannot push made-up terms
 * ("Acme<40 em spaces>Amount: 10.00 USDT") onto a line of their own where a
 * wallet wraps the message it signs.
 *
 * @example merchantName("Acme\u2003\u2003\u2003Amount: 1.00", "t") // "Acme Amount: 1.00"
 */
export const merchantName = (companyName: string | null | undefined, tenantName: string): string => flat(companyName ?? tenantName);

/**
 * Text from outside the service (a payment's comment, which anyone can send
 * to a COLLECTIONS wallet) for display beside the service's own words: on one
 * line, runs of spaces collapsed, at most `max` characters (then "…").
 */
export const displayText = (text: string, max = 120): string => {
  const line = flat(text);
  return line.length > max ? `${line.slice(0, max)}…` : line;
};
