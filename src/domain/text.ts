/**
 * Agent-written text: what a one-line field may hold, and the one normalization that compares
 * text (duplicate detection, requester blocks) and measures it (length checks). Pure.
 */

/**
 * One-line fields (requester, output_format, location_detail, a message's from and subject) hold
 * no control character: C0 (line breaks and tabs included), DEL, C1 (NEL included) and the
 * Unicode line and paragraph separators. A line break there would start a line of its own in
 * the operator's mail, where it could pose as one of the service's field lines.
 */
export const ONE_LINE_PATTERN = '^[^\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029]*$';

/** What a one-line field refused for its pattern is told, after the field name. */
export const ONE_LINE_RULE = 'must be a single line without control characters (no line breaks or tabs)';

/**
 * Characters that render as nothing: format characters (U+200B zero width space, U+200D zero
 * width joiner, U+FEFF, bidi controls, the soft hyphen) and the other default-ignorable code points
 * (variation selectors, Hangul fillers, the combining grapheme joiner).
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * The normalized form of agent text: NFKC (fullwidth `Ｂ` is `B`, `ﬁ` is `fi`, NFD is composed),
 * invisible characters removed, whitespace of every kind collapsed to one space and trimmed, case
 * folded (upper- then lower-casing, so `ß` and `SS` fold alike). Empty when nothing is visible.
 */
export function normalizeText(text: string): string {
  const composed = text.normalize('NFKC').replace(INVISIBLE, '').replace(/\s+/gu, ' ').trim();
  return composed.toUpperCase().toLowerCase().normalize('NFKC');
}

/** Does the text show anything once invisible characters and whitespace are gone? */
export function hasVisibleText(text: string): boolean {
  return normalizeText(text) !== '';
}

/**
 * The form two texts are compared in (duplicate descriptions, requester blocks): the normalized
 * text without trailing punctuation, so `Check the shop.` and `check the shop` are the same.
 */
export function comparisonKey(text: string): string {
  return normalizeText(text).replace(/[\s\p{P}]+$/u, '');
}
