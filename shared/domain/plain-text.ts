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
 * - invisible characters: every default-ignorable code point of Unicode
 *   (U+00AD, U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0,
 *   U+17B4–U+17B5, U+180B–U+180F, U+200B–U+200F, U+2060–U+206F, the
 *   variation selectors U+FE00–U+FE0F, U+FEFF, U+FFF0–U+FFF8, U+1BCA0–
 *   U+1BCA3, U+1D173–U+1D17A, and the whole of plane 14, U+E0000–U+E0FFF:
 *   tags and more variation selectors), the blank Braille pattern U+2800 and
 *   the interlinear annotations U+FFF9–U+FFFB: "INV-\u200B123" and
 *   "INV-\u034F123" would read as "INV-123".
 *
 * Plain UTF-16 ranges (the two astral runs outside plane 14 spelled as
 * surrogate pairs) rather than `\p{…}` classes or lookaheads: the OpenAPI pattern made of them
 * must work in every client's regex engine. plain-text.test.ts checks the
 * list against Unicode's Default_Ignorable_Code_Point property.
 */
const REFUSED =
  "\\u0000-\\u001F\\u007F-\\u009F\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u206F\\u2800\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF0-\\uFFFB\\uDB40-\\uDB43";
/** The astral invisible characters outside plane 14 (whose high surrogates REFUSED names): U+1BCA0–U+1BCA3 and U+1D173–U+1D17A. */
const REFUSED_PAIRS = "\\uD82F[\\uDCA0-\\uDCA3]|\\uD834[\\uDD73-\\uDD7A]";
/** Their high surrogates, allowed only before another low surrogate (the rest of those blocks). */
const KEPT_PAIRS = "\\uD82F[\\uDC00-\\uDC9F\\uDCA4-\\uDFFF]|\\uD834[\\uDC00-\\uDD72\\uDD7B-\\uDFFF]";
export const PLAIN_TEXT_PATTERN = new RegExp(`^(?:[^${REFUSED}\\uD82F\\uD834]|${KEPT_PAIRS})*$`);
export const PLAIN_TEXT_RULE = "must not contain control, invisible or bidirectional formatting characters, or line separators";
// A plane-14 character is one match with its low surrogate, so it becomes one space.
const NOT_PLAIN = new RegExp(`[\\uDB40-\\uDB43][\\uDC00-\\uDFFF]?|${REFUSED_PAIRS}|[${REFUSED}]`, "g");

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
