import type { Page } from 'playwright-core';

/** What the requester-facing page suites check in Chromium: tap targets, axe, sideways scroll. */

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1366, height: 900 };

/**
 * Every visible interactive element (a, button, input, select, textarea, summary, and labels
 * wrapping an input) whose clickable box is under 44×44 CSS px. An input's box is the larger of
 * its own and its label's (a click on the label toggles it). Exempt, as WCAG 2.5.8 exempts them:
 * links inside a sentence ("inline": their block holds words that are not links), whose size the
 * line height of the text around them sets.
 */
export async function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const MIN = 43.5;
    const problems: string[] = [];
    const visible = (el: Element) => {
      const box = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      return box.width > 1 && box.height > 1 && style.visibility !== 'hidden' && style.opacity !== '0' && box.right > 0 && box.bottom > 0;
    };
    const big = (box: DOMRect) => box.width >= MIN && box.height >= MIN;
    const describe = (el: Element, box: DOMRect) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.getAttribute('href') ? `[href="${el.getAttribute('href')}"]` : ''} "${(el.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40)}" ${Math.round(box.width)}×${Math.round(box.height)}`;
    const inSentence = (link: Element) => {
      let block: Element | null = link.parentElement;
      while (block && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
      if (!block) return false;
      const copy = block.cloneNode(true) as Element;
      for (const a of Array.from(copy.querySelectorAll('a'))) a.remove();
      return /\p{L}{2,}/u.test(copy.textContent ?? '');
    };
    for (const el of Array.from(document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary'))) {
      if (!visible(el)) continue;
      const box = el.getBoundingClientRect();
      if (el.tagName === 'A' && inSentence(el)) continue;
      if (el.tagName === 'INPUT') {
        const input = el as HTMLInputElement;
        const label = input.closest('label') ?? (input.id ? document.querySelector(`label[for="${input.id}"]`) : null);
        if (big(box) || (label && big(label.getBoundingClientRect()))) continue;
        problems.push(describe(el, label ? label.getBoundingClientRect() : box));
        continue;
      }
      if (!big(box)) problems.push(describe(el, box));
    }
    return problems;
  });
}

export async function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

export { seriousAxeViolations } from './support/axe.js';

/** Saves a full-page screenshot when SCREENSHOT_PREFIX is set (e.g. /tmp/i31p), for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const prefix = process.env.SCREENSHOT_PREFIX;
  if (!prefix) return;
  const width = page.viewportSize()?.width ?? 0;
  // Whole pages, except the very long documents (a screenshot of those takes longer than it is worth).
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.screenshot({ path: `${prefix}-${name.replace(/[^a-z0-9]+/gi, '_')}-${width}.png`, fullPage: height < 8000 });
}
