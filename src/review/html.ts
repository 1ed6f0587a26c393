/**
 * The HTML report: one self-contained file (inline style and a few lines of inline script, a
 * Content-Security-Policy that forbids every fetch), for one iteration or for all of them as a
 * timeline. Each file's diff is a `<details>` element, so it opens with a click, Enter or Space
 * and works without the script; the script only adds "expand all" and opens every diff before
 * printing. Diffs are syntax-neutral (monospace, +/− tinted) and cut with a marker past a line
 * budget per file and per page, so a huge iteration still gives a page a browser opens at once.
 */
import type { RestoreMark } from '../rewind/journal.js';
import { formatDuration } from '../session/duration.js';
import type { FileChange, Hunk } from './diff.js';
import { statusLetter } from './git-format.js';
import type { LoadedIteration } from './iteration.js';
import { summarise, testCounts } from './summary.js';

export interface ReportIteration {
  it: LoadedIteration;
  changes: FileChange[];
  /** The `session restore` that put the project back to this iteration (null: never; absent: not known). */
  restored?: RestoreMark | null;
}

export interface HtmlReportOptions {
  /** Most diff lines shown for one file before the cut marker (default 400). */
  maxLinesPerFile?: number;
  /** Most diff lines on the whole page; later files show a marker instead (default 20000). */
  maxLinesPerPage?: number;
  /** The project's name, shown in the title. */
  project?: string;
  /** The command that prints everything the page cut (shown in markers). */
  fullDiffHint?: (iteration: string) => string;
}

interface FailedTest {
  name: string;
  file?: string;
  message?: string;
}

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESC[c] as string);
}

function shortSha(commit: string): string {
  return /^[0-9a-f]{40,64}$/.test(commit) ? commit.slice(0, 12) : commit;
}

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

const STYLE = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;--add:#dafbe1;--addfg:#116329;--del:#ffebe9;--delfg:#a40e26;--hunk:#ddf4ff;--focus:#0969da}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:var(--bg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}h3{font-size:15px;margin:18px 0 8px}
.sub{color:var(--muted);margin:0 0 16px}
a{color:var(--focus)}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;margin:12px 0}
.fact{border:1px solid var(--line);border-radius:8px;padding:8px 12px;background:var(--soft)}
.fact b{display:block;font-size:12px;font-weight:600;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.fact span{font-size:16px;font-variant-numeric:tabular-nums}
code,.mono,pre{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
table{border-collapse:collapse;width:100%}
.files td,.files th,.timeline td,.timeline th{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
.files th,.timeline th{font-size:12px;color:var(--muted);font-weight:600}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.plus{color:var(--addfg)}.minus{color:var(--delfg)}
.st{display:inline-block;min-width:2.6em;text-align:center;border-radius:4px;font:600 11.5px/1.6 ui-monospace,Menlo,Consolas,monospace;padding:0 4px;color:#fff}
.st-A{background:#1a7f37}.st-M{background:#9a6700}.st-D{background:#cf222e}.st-R{background:#8250df}.st-T{background:#57606a}
.bar{display:inline-flex;width:60px;height:8px;border-radius:2px;overflow:hidden;background:var(--soft);vertical-align:middle;margin-left:6px}
.bar i{display:block;height:100%}.bar .a{background:#2da44e}.bar .d{background:#cf222e}
.path{word-break:break-all}
details.file{border:1px solid var(--line);border-radius:8px;margin:10px 0;overflow:hidden}
details.file>summary{cursor:pointer;padding:8px 12px;background:var(--soft);list-style-position:inside}
details.file>summary:hover{background:#eef1f4}
details.file[open]>summary{border-bottom:1px solid var(--line)}
.diff{width:100%;border-collapse:collapse;table-layout:fixed}
.diff td{padding:0 8px;white-space:pre-wrap;word-break:break-all;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px;line-height:1.45}
.diff td.ln{width:3.6em;color:var(--muted);text-align:right;user-select:none;padding:0 6px}
.diff tr.add td{background:var(--add)}.diff tr.del td{background:var(--del)}
.diff tr.add td.code::before{content:"+";color:var(--addfg)}.diff tr.del td.code::before{content:"-";color:var(--delfg)}.diff tr.ctx td.code::before{content:" "}
.diff tr.hunk td{background:var(--hunk);color:var(--muted)}
.diff tr.note td{color:var(--muted);font-style:italic}
.cut{padding:8px 12px;background:#fff8c5;border-top:1px solid var(--line)}
.note{color:var(--muted)}
.fail{color:var(--delfg)}.ok{color:var(--addfg)}
ul.tests{padding-left:20px}ul.tests li{margin:4px 0}
.controls{margin:8px 0}
button{font:inherit;padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:var(--soft);cursor:pointer}
svg.chart{width:100%;height:auto;border:1px solid var(--line);border-radius:8px;background:#fff}
svg.chart text{font:11px system-ui,sans-serif;fill:var(--muted)}
@media print{.controls,.skip{display:none}details.file{break-inside:auto}details.file>summary{list-style:none}body{font-size:12px}main{max-width:none;padding:0}.fact{background:none}}
`;

const SCRIPT = `
(function(){var all=function(open){document.querySelectorAll('details.file').forEach(function(d){d.open=open;});};
document.querySelectorAll('[data-expand]').forEach(function(b){b.addEventListener('click',function(){all(b.getAttribute('data-expand')==='1');});});
var before=[];window.addEventListener('beforeprint',function(){before=[];document.querySelectorAll('details.file').forEach(function(d){before.push([d,d.open]);d.open=true;});});
window.addEventListener('afterprint',function(){before.forEach(function(p){p[0].open=p[1];});});})();
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light">
<title>${esc(title)}</title><style>${STYLE}</style></head>
<body><a class="skip" href="#main">Skip to the report</a><main id="main">
${body}
</main><script>${SCRIPT}</script></body></html>
`;
}

function statusBadge(c: FileChange): string {
  const letter = statusLetter(c);
  return `<span class="st st-${letter[0] as string}" title="${esc(c.status)}">${esc(letter)}</span>`;
}

function pathLabel(c: FileChange): string {
  return c.oldPath !== undefined ? `${esc(c.oldPath)} → ${esc(c.path)}` : esc(c.path);
}

function counts(c: FileChange): string {
  if (c.notCaptured !== undefined) return '<span class="note">not captured</span>';
  if (c.binary) return '<span class="note">binary</span>';
  if (c.additions + c.deletions === 0 && c.oldMode !== undefined && c.newMode !== undefined && c.oldMode !== c.newMode) return `<span class="note">mode ${c.oldMode} → ${c.newMode}</span>`;
  return `<span class="plus">+${c.additions}</span> <span class="minus">−${c.deletions}</span>`;
}

function bar(c: FileChange, max: number): string {
  if (c.binary || c.notCaptured !== undefined || max === 0) return '';
  const a = Math.round((60 * c.additions) / max);
  const d = Math.round((60 * c.deletions) / max);
  return `<span class="bar" aria-hidden="true"><i class="a" style="width:${a}px"></i><i class="d" style="width:${d}px"></i></span>`;
}

function fileTable(changes: readonly FileChange[], anchor: string): string {
  if (changes.length === 0) return '<p class="note">No file changed.</p>';
  const max = Math.max(...changes.map((c) => c.additions + c.deletions));
  const rows = changes
    .map(
      (c, i) =>
        `<tr><td>${statusBadge(c)}</td><td class="path"><a href="#${anchor}-f${i}">${pathLabel(c)}</a></td><td class="num">${counts(c)}${bar(c, max)}</td></tr>`,
    )
    .join('\n');
  return `<table class="files"><thead><tr><th scope="col">Status</th><th scope="col">Path</th><th scope="col" class="num">Lines</th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

function hunkRows(hunks: readonly Hunk[], budget: { left: number }): { html: string; shown: number; total: number } {
  let html = '';
  let shown = 0;
  let total = 0;
  for (const h of hunks) total += h.lines.length + 1;
  for (const h of hunks) {
    if (budget.left <= 0) break;
    const header = `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@${h.section !== undefined ? ` ${h.section}` : ''}`;
    html += `<tr class="hunk"><td class="ln"></td><td class="ln"></td><td>${esc(header)}</td></tr>`;
    shown++;
    budget.left--;
    let o = h.oldStart;
    let n = h.newStart;
    for (const line of h.lines) {
      if (budget.left <= 0) break;
      const kind = line[0];
      const text = esc(line.slice(1));
      if (kind === '+') html += `<tr class="add"><td class="ln"></td><td class="ln">${n++}</td><td class="code">${text}</td></tr>`;
      else if (kind === '-') html += `<tr class="del"><td class="ln">${o++}</td><td class="ln"></td><td class="code">${text}</td></tr>`;
      else if (kind === '\\') html += `<tr class="note"><td class="ln"></td><td class="ln"></td><td>${esc(line)}</td></tr>`;
      else html += `<tr class="ctx"><td class="ln">${o++}</td><td class="ln">${n++}</td><td class="code">${text}</td></tr>`;
      shown++;
      budget.left--;
    }
  }
  return { html, shown, total };
}

function fileDiff(c: FileChange, id: string, options: Required<Pick<HtmlReportOptions, 'maxLinesPerFile'>>, pageBudget: { left: number }, hint: string): string {
  const head = `<summary>${statusBadge(c)} <span class="mono path">${pathLabel(c)}</span> <span class="num">${counts(c)}</span></summary>`;
  let body: string;
  if (c.notCaptured !== undefined) body = `<p class="cut">The ${c.notCaptured.join(' and ')} content of this file was not captured, so its diff cannot be shown.</p>`;
  else if (c.binary) body = `<p class="cut">Binary file${c.oldSize !== undefined || c.newSize !== undefined ? `: ${c.oldSize ?? 0} → ${c.newSize ?? 0} bytes` : ''}.</p>`;
  else if (c.hunks === undefined || c.hunks.length === 0) {
    const what = c.oldMode !== c.newMode && c.oldMode !== undefined && c.newMode !== undefined ? `Mode changed ${c.oldMode} → ${c.newMode}.` : c.status === 'renamed' ? 'Moved without a change to its content.' : 'Empty file.';
    body = `<p class="cut">${esc(what)}</p>`;
  } else if (pageBudget.left <= 0) body = `<p class="cut">Diff not included: this page reached its size limit. ${esc(hint)}</p>`;
  else {
    const budget = { left: Math.min(options.maxLinesPerFile, pageBudget.left) };
    const before = budget.left;
    const rows = hunkRows(c.hunks, budget);
    pageBudget.left -= before - budget.left;
    const cut = rows.shown < rows.total ? `<p class="cut">✂ Diff cut here: ${rows.total - rows.shown} more line${rows.total - rows.shown === 1 ? '' : 's'} not shown. ${esc(hint)}</p>` : '';
    body = `<table class="diff"><colgroup><col style="width:3.6em"><col style="width:3.6em"><col></colgroup><tbody>${rows.html}</tbody></table>${cut}`;
  }
  return `<details class="file" id="${id}">${head}${body}</details>`;
}

function failedTests(summary: unknown): FailedTest[] {
  const failures = (summary as { failures?: unknown } | null | undefined)?.failures;
  if (!Array.isArray(failures)) return [];
  return failures.filter((f): f is FailedTest => typeof f === 'object' && f !== null && typeof (f as FailedTest).name === 'string');
}

function testsSection(it: LoadedIteration): string {
  const tests = it.post?.tests;
  if (tests === undefined || !tests.found) return '';
  const c = testCounts(tests.summary);
  const line = c === undefined ? 'Test results found (no counts).' : `<span class="ok">${c.passed} passed</span>, <span class="${c.failed > 0 ? 'fail' : ''}">${c.failed} failed</span>, ${c.skipped} skipped`;
  const failed = failedTests(tests.summary);
  const list =
    failed.length === 0
      ? ''
      : `<ul class="tests">${failed
          .slice(0, 200)
          .map((f) => `<li><span class="fail">✗</span> <b>${esc(f.name)}</b>${f.file !== undefined ? ` <span class="mono note">${esc(f.file)}</span>` : ''}${f.message !== undefined ? `<br><span class="mono">${esc(f.message.split('\n').slice(0, 3).join('\n'))}</span>` : ''}</li>`)
          .join('')}${failed.length > 200 ? `<li class="note">… and ${failed.length - 200} more</li>` : ''}</ul>`;
  return `<h3>Tests</h3><p>${line}</p>${list}`;
}

function restoredLabel(mark: RestoreMark | null | undefined): string {
  if (mark === undefined) return '<span class="note">unknown</span>';
  return mark === null ? 'no' : `<span title="${esc(`restore ${mark.restore}, ${when(mark.at)}`)}">to ${esc(mark.to)}</span>`;
}

function iterationFacts(r: ReportIteration): string {
  const { it } = r;
  const post = it.post;
  const s = summarise(it, r.changes);
  const fact = (label: string, value: string): string => `<div class="fact"><b>${esc(label)}</b><span>${value}</span></div>`;
  const branch = post === null || it.pre.git.branch === post.git.branch ? it.pre.git.branch : `${it.pre.git.branch} → ${post.git.branch}`;
  const tests = s.tests === undefined ? 'none found' : `<span class="ok">${s.tests.passed} ✓</span> <span class="${s.tests.failed > 0 ? 'fail' : ''}">${s.tests.failed} ✗</span>`;
  return `<div class="facts">${[
    fact('Started', esc(when(it.pre.timestamp))),
    fact('Duration', esc(formatDuration(s.durationMs))),
    fact('Branch', `<span class="mono">${esc(branch)}</span>`),
    fact('HEAD', `<span class="mono">${esc(shortSha(it.pre.git.commit))} → ${esc(shortSha(post?.git.commit ?? '?'))}</span>`),
    fact('Files changed', String(s.filesChanged)),
    fact('Lines', `<span class="plus">+${s.additions}</span> <span class="minus">−${s.deletions}</span>`),
    fact('Commits', String(s.commits)),
    fact('Tests', tests),
    ...(r.restored === undefined ? [] : [fact('Restored', restoredLabel(r.restored))]),
  ].join('')}</div>`;
}

function iterationBody(r: ReportIteration, anchor: string, options: Required<Pick<HtmlReportOptions, 'maxLinesPerFile'>>, pageBudget: { left: number }, hint: string): string {
  const { it, changes } = r;
  const parts: string[] = [iterationFacts(r)];
  parts.push(`<h3>Files</h3>${fileTable(changes, anchor)}`);
  const commits = it.post?.commits ?? [];
  if (commits.length > 0) {
    parts.push(`<h3>Commits</h3><ul>${commits.map((c) => `<li><span class="mono">${esc(c.slice(0, 12))}</span> ${esc(c.replace(/^[0-9a-f]+ /, ''))}</li>`).join('')}</ul>`);
  }
  const tests = testsSection(it);
  if (tests !== '') parts.push(tests);
  const missing = changes.filter((c) => c.notCaptured !== undefined);
  const skipped = it.post?.inventory?.skippedPaths ?? [];
  if (missing.length > 0 || skipped.length > 0) {
    parts.push(
      `<h3>Not captured</h3><ul>${missing.map((c) => `<li><span class="mono">${esc(c.path)}</span>: ${esc((c.notCaptured ?? []).join(' and '))} content not kept</li>`).join('')}${skipped
        .slice(0, 100)
        .map((s) => `<li><span class="mono">${esc(s.path)}</span>: ${esc(s.reason)}</li>`)
        .join('')}</ul>`,
    );
  }
  if (changes.length > 0) {
    parts.push(
      `<h3>Diffs</h3><div class="controls"><button type="button" data-expand="1">Expand all</button> <button type="button" data-expand="0">Collapse all</button></div>${changes
        .map((c, i) => fileDiff(c, `${anchor}-f${i}`, options, pageBudget, hint))
        .join('\n')}`,
    );
  }
  return parts.join('\n');
}

function defaultHint(iteration: string): string {
  return `\`cairn session diff ${iteration}\` prints all of it.`;
}

/** One iteration's page. */
export function renderIterationHtml(r: ReportIteration, options: HtmlReportOptions = {}): string {
  const hint = (options.fullDiffHint ?? defaultHint)(r.it.iteration);
  const budget = { left: options.maxLinesPerPage ?? 20000 };
  const title = `Iteration ${r.it.iteration}${options.project !== undefined ? ` · ${options.project}` : ''}`;
  const body = `<h1>${esc(title)}</h1><p class="sub">cairn review of what the iteration changed, pre → post, committed or not.</p>\n${iterationBody(r, `it${r.it.iteration}`, { maxLinesPerFile: options.maxLinesPerFile ?? 400 }, budget, hint)}`;
  return page(title, body);
}

/** The chart of the timeline: lines added (up) and removed (down) per iteration, a test dot above each. */
function chart(rows: readonly ReportIteration[]): string {
  const w = 1100;
  const h = 180;
  const mid = 100;
  const n = rows.length;
  const col = Math.min(60, Math.max(6, Math.floor((w - 60) / Math.max(1, n))));
  const sums = rows.map((r) => summarise(r.it, r.changes));
  const max = Math.max(1, ...sums.map((s) => Math.max(s.additions, s.deletions)));
  let svg = `<svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-label="Lines added and removed per iteration, and test results"><line x1="40" x2="${w - 10}" y1="${mid}" y2="${mid}" stroke="#d1d9e0"/>`;
  svg += `<text x="4" y="${mid - 50}">+${max}</text><text x="4" y="${mid + 60}">−${max}</text>`;
  sums.forEach((s, i) => {
    const x = 44 + i * col;
    const up = Math.round((60 * s.additions) / max);
    const down = Math.round((60 * s.deletions) / max);
    const bw = Math.max(3, col - 4);
    svg += `<g><title>${esc(`iteration ${s.iteration}: ${s.filesChanged} files, +${s.additions} −${s.deletions}, ${s.commits} commits${s.tests ? `, tests ${s.tests.passed} passed ${s.tests.failed} failed` : ''}`)}</title>`;
    svg += `<rect x="${x}" y="${mid - up}" width="${bw}" height="${up}" fill="#2da44e"/><rect x="${x}" y="${mid}" width="${bw}" height="${down}" fill="#cf222e"/>`;
    if (s.tests !== undefined) svg += `<circle cx="${x + bw / 2}" cy="18" r="5" fill="${s.tests.failed > 0 ? '#cf222e' : '#2da44e'}"/>`;
    if (n <= 40 || i % Math.ceil(n / 40) === 0) svg += `<text x="${x}" y="${h - 6}">${esc(s.iteration)}</text>`;
    svg += '</g>';
  });
  return `${svg}</svg>`;
}

/** Every iteration: a chart over time, a table, then each iteration's facts, files and diffs. */
export function renderTimelineHtml(rows: readonly ReportIteration[], options: HtmlReportOptions = {}): string {
  const title = `Iterations${options.project !== undefined ? ` · ${options.project}` : ''}`;
  const budget = { left: options.maxLinesPerPage ?? 20000 };
  const sums = rows.map((r) => summarise(r.it, r.changes));
  const first = rows[0]?.it.pre.timestamp;
  const last = rows.at(-1)?.it.pre.timestamp;
  const table = `<table class="timeline"><thead><tr><th scope="col">Iteration</th><th scope="col">Started</th><th scope="col">Took</th><th scope="col" class="num">Files</th><th scope="col" class="num">Lines</th><th scope="col" class="num">Commits</th><th scope="col">Tests</th><th scope="col">Restored</th></tr></thead><tbody>${sums
    .map(
      (s, i) =>
        `<tr><td><a href="#it${esc(s.iteration)}">${esc(s.iteration)}</a></td><td>${esc(when(s.startedAt))}</td><td>${esc(formatDuration(s.durationMs))}</td><td class="num">${s.filesChanged}</td><td class="num"><span class="plus">+${s.additions}</span> <span class="minus">−${s.deletions}</span></td><td class="num">${s.commits}</td><td>${s.tests === undefined ? '<span class="note">none</span>' : `<span class="ok">${s.tests.passed} passed</span>, <span class="${s.tests.failed > 0 ? 'fail' : ''}">${s.tests.failed} failed</span>`}</td><td>${restoredLabel(rows[i]?.restored)}</td></tr>`,
    )
    .join('')}</tbody></table>`;
  const sections = rows
    .map((r) => {
      const anchor = `it${r.it.iteration}`;
      const hint = (options.fullDiffHint ?? defaultHint)(r.it.iteration);
      return `<section id="${esc(anchor)}" aria-labelledby="${esc(anchor)}-h"><h2 id="${esc(anchor)}-h">Iteration ${esc(r.it.iteration)}</h2>${iterationBody(r, anchor, { maxLinesPerFile: options.maxLinesPerFile ?? 400 }, budget, hint)}</section>`;
    })
    .join('\n');
  const span = first !== undefined && last !== undefined ? `${rows.length} iteration${rows.length === 1 ? '' : 's'}, ${esc(when(first))} → ${esc(when(last))}` : 'no iterations yet';
  const body = `<h1>${esc(title)}</h1><p class="sub">${span}</p>${rows.length > 0 ? chart(rows) : ''}<h2>Timeline</h2>${table}\n${sections}`;
  return page(title, body);
}
