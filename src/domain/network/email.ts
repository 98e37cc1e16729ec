import { domainToASCII } from 'node:url';

/**
 * E-mail address syntax, shared by abuse control (the deliverability check), mail (what may be a
 * recipient) and the blocklist (normalizing entries). Pure: no DNS here (abuse/email.ts).
 */

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

export const PLACEHOLDER_DOMAINS = ['example.com', 'example.org', 'example.net', 'localhost'];
export const PLACEHOLDER_TLDS = ['example', 'test', 'invalid', 'localhost'];

/** The ASCII (punycode) lower-case domain after the @ of a well-formed local part, or null. */
export function domainPart(address: string): string | null {
  const at = address.lastIndexOf('@');
  if (at < 1 || at > 64 || address.length > 254) return null;
  if (!LOCAL_PART.test(address.slice(0, at))) return null;
  const domain = domainToASCII(address.slice(at + 1)).toLowerCase();
  return domain === '' ? null : domain;
}

/** The ASCII (punycode) lower-case domain of an address, or null when the address is not one. */
export function emailDomain(address: string): string | null {
  const domain = domainPart(address);
  return domain !== null && isHostname(domain) ? domain : null;
}

/**
 * A plain ASCII `local@domain` address — dot-atom local part, LDH domain labels, no quoted strings,
 * comments or address literals — so no space, comma, angle bracket, quote or line break can be in
 * it: safe to put in a mail header as it is.
 */
export function isPlainAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  return at >= 1 && at <= 64 && address.length <= 254 && LOCAL_PART.test(address.slice(0, at)) && isHostname(address.slice(at + 1).toLowerCase());
}

/** A dotted DNS name of at least two labels with an alphabetic (or IDN) top-level label. */
export function isHostname(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && TLD.test(labels[labels.length - 1]!);
}

export function isPlaceholderDomain(domain: string): boolean {
  if (PLACEHOLDER_DOMAINS.some((d) => domain === d || domain.endsWith(`.${d}`))) return true;
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  return PLACEHOLDER_TLDS.includes(tld);
}
