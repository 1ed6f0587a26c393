#!/usr/bin/env node
/**
 * The `cairn` executable. It turns on V8's compile cache before the CLI is loaded: a static import
 * of main.js would be compiled before the first line here runs, so the CLI comes in by import().
 * The commonest short runs take a fast lane that skips the CLI framework (fast-lane.ts); help
 * text comes from dist/bin/help.json, captured from the full CLI at build time.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { enableCompileCache } from '../core/compile-cache.js';
import { pickLane } from './fast-lane.js';
import { runAsCairnProcess } from './process.js';
import { socketMayBeAt } from '../daemon/protocol.js';

enableCompileCache();

/** The captured text for a help or version lane, or undefined (no table beside the bundle, no such command). */
function captured(key: string): string | undefined {
  try {
    const table = JSON.parse(readFileSync(new URL('./help.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const text = Object.hasOwn(table, key) ? table[key] : undefined;
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

const lane = pickLane(process.argv.slice(2), process.stdout.isTTY === true);
const text = lane?.kind === 'help' ? captured(`help:${lane.path}`) : lane?.kind === 'version' ? captured('version') : undefined;
if (text !== undefined) {
  runAsCairnProcess((io) => {
    io.stdout.write(text);
    return Promise.resolve(0);
  });
} else if (lane?.kind === 'snapshot') {
  // A running `cairn daemon` first, before the scanner's bundle loads (daemon-lane.ts); with no
  // socket at the root, not even the client is loaded. By URL: the bundle keeps the lanes one
  // module of their own (scripts/bundle-cli.mjs).
  const mayServe = process.env.CAIRN_DAEMON !== '0' && socketMayBeAt(path.resolve(lane.flags.root));
  const daemonLane = mayServe ? ((await import(new URL('./daemon-lane.js', import.meta.url).href)) as typeof import('./daemon-lane.js')) : null;
  if (daemonLane === null || !(await daemonLane.snapshotThroughDaemon(lane.flags)).served) {
    const lanes = (await import(new URL('./snapshot-lane.js', import.meta.url).href)) as typeof import('./snapshot-lane.js');
    lanes.runSnapshotLane(lane.flags, true);
  }
} else if (lane?.kind === 'hook') {
  // A running `cairn daemon` first, before the hook lane's bundle loads (daemon-lane.ts).
  const daemonLane = (await import(new URL('./daemon-lane.js', import.meta.url).href)) as typeof import('./daemon-lane.js');
  const outcome = await daemonLane.hookThroughDaemon(lane.agent);
  if (!outcome.served) {
    const hookLane = (await import(new URL('./hook-lane.js', import.meta.url).href)) as typeof import('./hook-lane.js');
    if (!hookLane.runHookLane(lane.agent, outcome.stdin)) (await import(new URL('./main.js', import.meta.url).href) as typeof import('./main.js')).runAsProcess();
  }
} else if (lane?.kind === 'session pre' || lane?.kind === 'session post') {
  const phase = lane.kind === 'session pre' ? 'pre' : 'post';
  const daemonLane = (await import(new URL('./daemon-lane.js', import.meta.url).href)) as typeof import('./daemon-lane.js');
  if (!(await daemonLane.sessionThroughDaemon(phase, lane.flags)).served) {
    const sessionLane = (await import(new URL('./session-lane.js', import.meta.url).href)) as typeof import('./session-lane.js');
    sessionLane.runSessionLane(phase, lane.flags, true);
  }
} else (await import(new URL('./main.js', import.meta.url).href) as typeof import('./main.js')).runAsProcess();
