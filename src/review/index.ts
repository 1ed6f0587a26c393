/**
 * Review: how an iteration changed the project. `iteration.ts` finds and reads an iteration;
 * `diff.ts` turns the paths its two inventories disagree on into git-style file changes, reading
 * bytes through a `ContentSource` (`content.ts`); `git-format.ts` writes them as git does;
 * `summary.ts` keeps the review computed at `session post`; `list.ts` lists iterations.
 */
export { iterationContentSource } from './content.js';
export type { ContentRequest, ContentSource, Side } from './content.js';
export { diffEntries, gitBlobId, gitMode, isBinary, lineCounts, lineCountsOfTexts, lineHunks } from './diff.js';
export type { ChangeStatus, DiffOptions, EntryChange, FileChange, GitMode, Hunk } from './diff.js';
export { quotePath, renameName, renderFilePatch, renderNameStatus, renderPatch, renderStat, statSummary, statusLetter } from './git-format.js';
export { contentSourceFor, iterationFileChanges, iterationLabel, loadIteration, notFinishedError, resolveIteration } from './iteration.js';
export type { LoadedIteration } from './iteration.js';
export { listIterations, renderIterationList } from './list.js';
export type { ListedIteration } from './list.js';
export { REVIEW_FILE, REVIEW_KIND, REVIEW_PATCH_MAX, boundPatch, buildReview, readSavedReview, reviewFile, reviewFinishedIteration, saveReview, savedFileChanges, savedPatch, summarise, testCounts } from './summary.js';
export type { IterationReview, IterationSummary, ReviewFile, TestCounts } from './summary.js';
export { renderIterationHtml, renderTimelineHtml } from './html.js';
export type { HtmlReportOptions, ReportIteration } from './html.js';
