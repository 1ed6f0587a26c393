/**
 * The HTML report in a real browser: Debian's chromium, driven by playwright-core (no browser
 * download; `scripts/servers/install.sh` installs the package). The page is loaded from disk
 * with the network blocked; screenshots of one iteration and of the timeline are kept in
 * test-artifacts/ (gitignored). CAIRN_SKIP_BROWSER=1 skips this file on a machine without
 * chromium; otherwise a missing browser fails with the reason.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { commitAll, git, makeRepo, makeTempDir, removeDir, write } from '../session/helpers.js';
import { everyChangeIteration } from './fixture.js';

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts');
const skip = process.env.CAIRN_SKIP_BROWSER === '1';

const JUNIT = `<?xml version="1.0"?>
<testsuites name="vitest tests"><testsuite name="src/math.test.ts" tests="3">
<testcase name="math adds" classname="src/math.test.ts"/>
<testcase name="math divides by zero" classname="src/math.test.ts" file="src/math.test.ts"><failure message="expected Infinity to be 0">AssertionError</failure></testcase>
<testcase name="parser keeps &lt;tags&gt;" classname="src/parse.test.ts" file="src/parse.test.ts"><failure message="expected '&lt;b&gt;' to equal '&lt;i&gt;'"/></testcase>
</testsuite></testsuites>`;

const dirs: string[] = [];
const tracked = (dir: string): string => {
  dirs.push(dir);
  return dir;
};
const cache = tracked(makeTempDir('cairn-cache-'));
const cli = (args: string[], cwd: string) => runCli(args, { cwd, env: { XDG_CACHE_HOME: cache } });

let context: BrowserContext;
let root: string;
let onePage: string;
let allPage: string;

/** Opens a report from disk; every request that is not the file itself is refused and recorded. */
async function open(file: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  const self = pathToFileURL(file).href;
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => {
    if (r.url() !== self) requests.push(r.url());
  });
  await page.route('**/*', (route) => (route.request().url() === self ? route.continue() : route.abort()));
  await page.goto(self, { waitUntil: 'load' });
  return { page, errors, requests };
}

describe.skipIf(skip)('the HTML report in headless Chromium', () => {
  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run \`sudo bash scripts/servers/install.sh\` (installs Debian's chromium), or set CAIRN_SKIP_BROWSER=1`);
    root = everyChangeIteration(
      () => tracked(makeRepo()),
      cli,
      (r) => write(r, 'junit.xml', JUNIT),
    ).root;
    git(root, 'reset', '-q');
    // a second iteration, so the timeline has a history
    expect(cli(['session', 'pre'], root).status).toBe(0);
    write(root, 'a.txt', 'one\ntwo\nTHREE\nfour\n');
    fs.rmSync(path.join(root, 'junit.xml'));
    write(root, 'test-results.json', JSON.stringify({ numTotalTests: 3, numPassedTests: 3, numFailedTests: 0, numPendingTests: 0 }));
    commitAll(root, 'tidy up');
    expect(cli(['session', 'post', '--no-store'], root).status).toBe(0);

    const out = tracked(makeTempDir('cairn-html-'));
    onePage = path.join(out, 'one.html');
    allPage = path.join(out, 'all.html');
    expect(cli(['session', 'report', '1', '--html', onePage], root).status).toBe(0);
    expect(cli(['session', 'report', '--all', '--html', allPage], root).status).toBe(0);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    context = await chromium.launchPersistentContext(tracked(makeTempDir('cairn-chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      offline: true,
      viewport: { width: 1280, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    await context?.close();
    for (const d of dirs) removeDir(d);
  });

  it('is one file that references nothing outside itself', () => {
    const html = fs.readFileSync(onePage, 'utf8');
    expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b/i);
    expect(html).not.toMatch(/\b(src|href)="(?!#)/i);
    expect(html).toContain("default-src 'none'");
  });

  it('shows every changed path with its status and counts, no console error, no request', async () => {
    const { page, errors, requests } = await open(onePage);
    const table = await page.locator('table.files').innerText();
    const files = JSON.parse(cli(['session', 'diff', '1', '--json'], root).stdout) as { files: Array<{ path: string; oldPath?: string; additions: number; deletions: number; binary: boolean }> };
    expect(files.files.length).toBeGreaterThan(8);
    for (const f of files.files) {
      expect(table).toContain(f.path);
      if (f.oldPath !== undefined) expect(table).toContain(`${f.oldPath} → ${f.path}`);
      const row = page.locator('table.files tr', { hasText: f.path }).first();
      const text = await row.innerText();
      if (f.binary) expect(text).toContain('binary');
      else if (f.path === 'tool.sh') expect(text).toContain('mode 100644 → 100755');
      else expect(text).toContain(`+${f.additions} −${f.deletions}`);
      await expect(row.isVisible()).resolves.toBe(true);
    }
    const facts = await page.locator('.facts').innerText();
    expect(facts).toMatch(/Files changed\s+\d+/i);
    expect(facts).toMatch(/Commits\s+1/i);
    expect(await page.locator('table.files tr', { hasText: 'tool.sh' }).innerText()).toContain('mode 100644 → 100755');
    for (const name of ['a.txt', 'new/moved.txt']) await page.locator('details.file summary', { hasText: name }).first().click();
    await page.screenshot({ path: path.join(ARTIFACTS, 'report-iteration.png'), fullPage: true });
    // the top of the page, small enough for the README (docs/session-report.png is a copy)
    await page.setViewportSize({ width: 1000, height: 1200 });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'report-iteration-top.png'), clip: { x: 0, y: 0, width: 1000, height: 1200 } });
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it('opens a diff on click and by keyboard (Enter, then Space closes it)', async () => {
    const { page, errors } = await open(onePage);
    const diff = page.locator('details.file', { hasText: 'a.txt' }).first();
    await expect(diff.evaluate((d) => (d as unknown as { open: boolean }).open)).resolves.toBe(false);
    await expect(diff.locator('table.diff').isVisible()).resolves.toBe(false);
    await diff.locator('summary').click();
    await expect(diff.locator('table.diff').isVisible()).resolves.toBe(true);
    expect(await diff.locator('tr.add').first().innerText()).toContain('THREE');
    await diff.locator('summary').click();

    const other = page.locator('details.file', { hasText: 'new/moved.txt' }).first();
    await other.locator('summary').focus();
    await page.keyboard.press('Enter');
    await expect(other.locator('table.diff').isVisible()).resolves.toBe(true);
    expect(await other.locator('tr.del').first().innerText()).toContain('line 7');
    await page.keyboard.press('Space');
    await expect(other.locator('table.diff').isVisible()).resolves.toBe(false);

    // Tab reaches the diffs: focus moves through links and summaries without a mouse
    await page.locator('body').focus();
    let reached = false;
    for (let i = 0; i < 60 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate("document.activeElement?.tagName === 'SUMMARY'")) === true;
    }
    expect(reached).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('names the failing tests with their file and message', async () => {
    const { page } = await open(onePage);
    const tests = await page.locator('ul.tests').innerText();
    expect(tests).toContain('math divides by zero');
    expect(tests).toContain('src/math.test.ts');
    expect(tests).toContain('expected Infinity to be 0');
    expect(tests).toContain('parser keeps <tags>');
    expect(await page.locator('.facts').innerText()).toMatch(/1 ✓\s*2 ✗/);
    await page.close();
  });

  it('prints with every diff open', async () => {
    const { page } = await open(onePage);
    await page.emulateMedia({ media: 'print' });
    await page.evaluate("window.dispatchEvent(new Event('beforeprint'))");
    const allOpen = await page.locator('details.file').evaluateAll((ds) => ds.every((d) => (d as unknown as { open: boolean }).open));
    expect(allOpen).toBe(true);
    await expect(page.locator('.controls').first().isVisible()).resolves.toBe(false);
    await page.close();
  });

  it('shows the timeline of every iteration with files, commits and tests over time', async () => {
    const { page, errors, requests } = await open(allPage);
    const rows = await page.locator('table.timeline tbody tr').allInnerTexts();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^001\s/);
    expect(rows[0]).toContain('1 passed, 2 failed');
    expect(rows[1]).toMatch(/^002\s/);
    expect(rows[1]).toContain('3 passed, 0 failed');
    await expect(page.locator('svg.chart rect').count()).resolves.toBe(4);
    await expect(page.locator('svg.chart circle').count()).resolves.toBe(2);
    await page.locator('table.timeline a', { hasText: '002' }).click();
    expect(await page.locator('#it002').innerText()).toContain('tidy up');
    await page.screenshot({ path: path.join(ARTIFACTS, 'report-timeline.png'), fullPage: true });
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it('cuts a large diff with a marker that says how to see the rest', async () => {
    const big = tracked(makeRepo());
    write(big, 'big.txt', '');
    commitAll(big, 'init');
    expect(cli(['session', 'pre'], big).status).toBe(0);
    write(big, 'big.txt', Array.from({ length: 3000 }, (_, i) => `line ${i}\n`).join(''));
    expect(cli(['session', 'post', '--no-store'], big).status).toBe(0);
    const file = path.join(tracked(makeTempDir('cairn-html-')), 'big.html');
    expect(cli(['session', 'report', '--html', file], big).status).toBe(0);
    expect(fs.statSync(file).size).toBeLessThan(200_000);
    const { page } = await open(file);
    await page.locator('details.file summary').first().click();
    const cut = await page.locator('details.file .cut').innerText();
    expect(cut).toMatch(/Diff cut here: 2601 more lines not shown\. `cairn session diff 001` prints all of it\./);
    await page.close();
  });
});
