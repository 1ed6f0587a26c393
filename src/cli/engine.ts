/**
 * The snapshot command's engine without the seed surface's file cap: what `bench/peers/cairn-scan.mjs`
 * runs to measure the CLI's own code path on trees past 50,000 files. A second entry of the CLI
 * bundle (scripts/bundle-cli.mjs), so it loads the very chunks `cairn snapshot` loads.
 */
export { scanTree, scanForSnapshot } from '../inventory/scan.js';
export { makeRepoSnapshot } from '../inventory/snapshot.js';
export { writeRepoSnapshot } from '../inventory/memo/render.js';
