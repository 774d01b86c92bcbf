/**
 * Tenant branding shown by the widget (SPEC.md "Merchant configuration":
 * company name, logo URL, primary color, support e-mail, terms URL).
 * The widget renders these on the merchant's pages, so URLs are https only:
 * a `javascript:` or `data:` URL in an `href`/`src` would run or smuggle
 * content, and plain http would be mixed content.
 */
export type Branding = {
  companyName: string;
  logoUrl: string | null;
  primaryColor: string | null;
  supportEmail: string | null;
  termsUrl: string | null;
};

export const MAX_COMPANY_NAME_LENGTH = 200;
export const MAX_URL_LENGTH = 2048;

const HEX_COLOR = /^#[0-9A-Fa-f]{6}$/;
export const HEX_COLOR_RULE = "must be a hex color #RRGGBB, like #1A2B3C";
/** Whitespace and control characters: `new URL` silently strips or encodes them. */
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/**
 * Why `value` is not an https URL we will render, or null when it is.
 *
 * @example httpsUrlProblem("https://cdn.example.com/logo.png") // null
 * @example httpsUrlProblem("javascript:alert(1)") // "must be an https URL"
 */
export function httpsUrlProblem(value: string): string | null {
  if (value.length === 0) return "must not be empty; send null to clear it";
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (WHITESPACE_OR_CONTROL.test(value)) return "must not contain spaces or control characters";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a valid URL";
  }
  if (url.protocol !== "https:") return "must be an https URL";
  if (url.username !== "" || url.password !== "") return "must not contain credentials";
  return null;
}

/**
 * True for a `#RRGGBB` color (hex digits in either case); no names, no `#RGB`.
 *
 * @example isHexColor("#1A2b3C") // true
 * @example isHexColor("red") // false
 */
export const isHexColor = (value: string): boolean => HEX_COLOR.test(value);

/**
 * The rules of branding a schema might not have applied, one message per bad
 * field starting with its path (`branding.logoUrl: …`). The e-mail's format is
 * checked at the edge (zod's e-mail rule).
 */
export function checkBranding(b: Branding): string[] {
  const errors: string[] = [];
  const name = b.companyName.trim();
  if (name.length === 0) errors.push("branding.companyName: must not be empty");
  if (name.length > MAX_COMPANY_NAME_LENGTH) {
    errors.push(`branding.companyName: must be at most ${MAX_COMPANY_NAME_LENGTH} characters`);
  }
  for (const field of ["logoUrl", "termsUrl"] as const) {
    const value = b[field];
    const problem = value === null ? null : httpsUrlProblem(value);
    if (problem) errors.push(`branding.${field}: ${problem}`);
  }
  if (b.primaryColor !== null && !isHexColor(b.primaryColor)) {
    errors.push(`branding.primaryColor: ${HEX_COLOR_RULE}`);
  }
  return errors;
}
