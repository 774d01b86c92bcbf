const COLOR = /^#[0-9A-Fa-f]{6}$/;
export const DEFAULT_BRAND_COLOR = "#1f4fd1";

/** The merchant's primary color when it is strictly `#RRGGBB`, else the default: nothing else reaches a style sheet. */
export const brandColor = (value: string | null | undefined): string => (value && COLOR.test(value) ? value : DEFAULT_BRAND_COLOR);

/** WCAG relative luminance of `#RRGGBB`. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG contrast ratio of two `#RRGGBB` colors (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** Text on the brand color: white or black, whichever contrasts more (buttons stay readable on any brand color). */
export const textOn = (background: string): string => (contrastRatio(background, "#ffffff") >= contrastRatio(background, "#000000") ? "#ffffff" : "#000000");
