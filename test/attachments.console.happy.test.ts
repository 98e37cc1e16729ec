import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { photoWithGps, sha256Hex } from './attachments.support.js';
import { type Json, patchOk, submit } from './operator.support.js';
import { STORES, TEST_ADMIN_KEY, TestClock, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

describe.each(STORES)('evidence files in the console, on a phone, on %s', (store) => {
  const t = useTestApp({ store, clock: new TestClock(new Date()) });
  const browser = useBrowser();
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'hts-pick-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function phone(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/operator$/);
    return page;
  }

  it('picks photos and a file, shows progress, lists them with hashes, removes one, delivers, and the status page shows thumbnails', async () => {
    const id = await submit(t, { location_required: false, output_format: 'text_report_with_photos' });
    await patchOk(t, id, { status: 'accepted' });
    const photo = await photoWithGps(320, 240);
    const second = await sharp({ create: { width: 200, height: 200, channels: 3, background: '#20a040' } })
      .png()
      .toBuffer();
    writeFileSync(path.join(dir, 'IMG_0042.jpg'), photo);
    writeFileSync(path.join(dir, 'shelf.png'), second);
    writeFileSync(path.join(dir, 'notes été.txt'), 'Shelf 3 is empty.');
    writeFileSync(path.join(dir, 'mistake.txt'), 'wrong file');

    const page = await phone();
    await page.goto(`${t.url}/operator/tasks/${id}`);
    const input = page.locator('input[type="file"]');
    expect(await input.getAttribute('multiple')).not.toBeNull();
    expect(await input.getAttribute('accept')).toBe('image/*,video/*,*/*');
    expect(await input.getAttribute('capture')).toBeNull();
    expect(await page.locator('#metadata-note').textContent()).toContain('removed before the hash is taken');

    await input.setInputFiles(['IMG_0042.jpg', 'shelf.png', 'notes été.txt', 'mistake.txt'].map((n) => path.join(dir, n)));
    // The page reloads once every file is in; then the list shows each with its hash.
    await page.locator('.files .file').nth(3).waitFor({ timeout: 20_000 });
    const listed = await page.locator('.files .file-meta a').allTextContents();
    expect(listed).toEqual(['IMG_0042.jpg', 'shelf.png', 'notes été.txt', 'mistake.txt']);
    const hashes = await page.locator('.files .file-hash').allTextContents();
    expect(hashes[2]).toBe(`sha256 ${sha256Hex(Buffer.from('Shelf 3 is empty.'))}`);
    expect(await page.locator('.files img').count()).toBe(2);

    // Nothing overflows the phone's width.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);

    await page.getByRole('button', { name: 'Remove mistake.txt' }).click();
    await page.waitForURL(/done=file_removed/);
    expect(await page.locator('.files .file-meta a').allTextContents()).toEqual(['IMG_0042.jpg', 'shelf.png', 'notes été.txt']);

    await page.locator('#notes').fill('Shelf photos and notes attached.');
    await page.getByRole('button', { name: 'Deliver & sign receipt' }).click();
    await page.waitForURL(/done=delivered/);

    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    const files = task.attachments as Json[];
    expect(files.map((f) => f.name)).toEqual(['IMG_0042.jpg', 'shelf.png', 'notes été.txt']);

    await page.goto(`${t.url}/tasks?id=${id}`);
    const thumbs = page.locator('.files img');
    expect(await thumbs.count()).toBe(2);
    // The thumbnails really load (same origin, under the page's CSP).
    await expect
      .poll(async () => thumbs.evaluateAll((imgs) => imgs.map((img) => (img as HTMLImageElement).naturalWidth)), { timeout: 10_000 })
      .toEqual([240, 200]); // the photo, rotated upright (EXIF orientation 6), is 240 wide
    const pageText = (await page.locator('#files-heading').locator('..').textContent()) ?? '';
    for (const file of files) expect(pageText).toContain(String(file.sha256));
    expect(await page.locator('.files a[download]').allTextContents()).toEqual(['IMG_0042.jpg', 'shelf.png', 'notes été.txt']);
    await page.context().close();
  });

  it('takes files dropped on the drop zone (desktop)', async () => {
    const id = await submit(t, { location_required: false });
    await patchOk(t, id, { status: 'accepted' });
    const page = await phone();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${t.url}/operator/tasks/${id}`);
    const transfer = await page.evaluateHandle(() => {
      const data = new DataTransfer();
      data.items.add(new File(['dropped evidence'], 'dropped.txt', { type: 'text/plain' }));
      return data;
    });
    await page.locator('.dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    await page.locator('.files .file').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.files .file-meta a').allTextContents()).toEqual(['dropped.txt']);
    await page.context().close();
  });

  it('warns before delivery when photo metadata will be kept (location_required)', async () => {
    const id = await submit(t, { location_required: true });
    await patchOk(t, id, { status: 'accepted' });
    const page = await phone();
    await page.goto(`${t.url}/operator/tasks/${id}`);
    expect(await page.locator('#metadata-note').textContent()).toContain('Photo metadata is kept for this task');
    await page.context().close();
  });
});
