/**
 * Text that people read where it cannot be told apart from what the service
 * wrote around it: a borrower reference in the dashboard, notifications and
 * e-mails; a merchant's name in the message a wallet signs. Such text holds
 * no control characters (C0, DEL, C1: a newline would add a line of its own
 * to a signed agreement) and no bidirectional overrides or isolates (U+202A–
 * U+202E, U+2066–U+2069: they make one text look like another).
 *
 * A plain character range rather than `\p{Cc}`: the OpenAPI pattern made of
 * it must work in every client's regex engine.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it refuses
export const PLAIN_TEXT_PATTERN = /^[^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$/;
export const PLAIN_TEXT_RULE = "must not contain control characters or bidirectional overrides";
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it replaces
const NOT_PLAIN = /[\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/**
 * `text` on one line and as it reads: each control character or
 * bidirectional override replaced by a space. For text stored before the
 * rule, where it goes into a message that is signed.
 *
 * @example oneLine("Evil\nAmount: 1.00 USDC") // "Evil Amount: 1.00 USDC"
 */
export const oneLine = (text: string): string => text.replace(NOT_PLAIN, " ");

/** The merchant a borrower sees named: the branding's company name, else the tenant's name; on one line. */
export const merchantName = (companyName: string | null | undefined, tenantName: string): string => oneLine(companyName ?? tenantName);
