#!/usr/bin/env node
/**
 * The `cairn` executable. The build bundles it as CommonJS (dist/bin/cairn.js, with the daemon
 * lane beside it as dist/bin/daemon-lane.js; dist/bin/package.json says both are CommonJS):
 * Node reads and compiles a CommonJS module synchronously, while an ES module entry first starts
 * Node's ES module loader, which on Node 20 (no compile cache) costs a short process several ms.
 * So help, the version, a turn the project's `cairn daemon` serves and the fast lanes (snapshot,
 * session pre/post, hook: CommonJS too, dist/bin/<lane>-lane.js) never start that loader; every
 * other command imports the full CLI (dist/bin/main.mjs, an ES module).
 * It turns on V8's compile cache before a lane is loaded (on Node 20, the lanes' own code cache).
 * The commonest short runs take a fast lane that skips the CLI framework (fast-lane.ts); help text
 * comes from dist/bin/help.json, captured from the full CLI at build time.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { enableCompileCache, requireLane } from '../core/compile-cache.js';
import { pickLane } from './fast-lane.js';
import { runAsCairnProcess } from './process.js';
import { socketMayBeAt } from '../daemon/protocol.js';

enableCompileCache();

/**
 * This module's directory: in the CommonJS bundle __dirname, as import.meta.filename is __filename
 * (scripts/bundle-cli.mjs defines both). Not import.meta.url: making this file's URL loads
 * node:url, ~1–2 ms of a served turn on Node 20. The lanes are loaded by paths esbuild does not
 * follow, so each stays a bundle of its own.
 */
const here = import.meta.dirname;

/** The daemon lane (daemon-lane.ts), CommonJS like this file: asking a daemon loads no ES module. */
function daemonLane(): typeof import('./daemon-lane.js') {
  return createRequire(import.meta.filename)('./daemon-lane.js') as typeof import('./daemon-lane.js');
}

/**
 * A fast lane (snapshot-lane.ts, session-lane.ts, hook-lane.ts), CommonJS too: its run loads no ES
 * module either; on Node 20 it is compiled from the code cache a former run left (requireLane).
 */
function fastLane<T>(file: string): T {
  return requireLane(path.join(here, file)) as T;
}

/** The full CLI (`main.mjs`), an ES module with chunks. */
async function esLane<T>(file: string): Promise<T> {
  const { pathToFileURL } = process.getBuiltinModule('node:url');
  return (await import(pathToFileURL(path.join(here, file)).href)) as T;
}

/** The captured text for a help or version lane, or undefined (no table beside the bundle, no such command). */
function captured(key: string): string | undefined {
  try {
    const table = JSON.parse(readFileSync(path.join(here, 'help.json'), 'utf8')) as Record<string, unknown>;
    const text = Object.hasOwn(table, key) ? table[key] : undefined;
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

async function runFullCli(): Promise<void> {
  (await esLane<typeof import('./main.js')>('main.mjs')).runAsProcess();
}

async function run(): Promise<void> {
  const lane = pickLane(process.argv.slice(2), process.stdout.isTTY === true);
  const text = lane?.kind === 'help' ? captured(`help:${lane.path}`) : lane?.kind === 'version' ? captured('version') : undefined;
  if (text !== undefined) {
    runAsCairnProcess((io) => {
      io.stdout.write(text);
      return Promise.resolve(0);
    });
  } else if (lane?.kind === 'snapshot') {
    // A running `cairn daemon` first, before the scanner's bundle loads (daemon-lane.ts); with no
    // socket at the root, not even the client is loaded.
    const mayServe = process.env.CAIRN_DAEMON !== '0' && socketMayBeAt(path.resolve(lane.flags.root));
    if (!mayServe || !(await daemonLane().snapshotThroughDaemon(lane.flags)).served) {
      fastLane<typeof import('./snapshot-lane.js')>('snapshot-lane.js').runSnapshotLane(lane.flags, true);
    }
  } else if (lane?.kind === 'hook') {
    // A running `cairn daemon` first, before the hook lane's bundle loads (daemon-lane.ts).
    const outcome = await daemonLane().hookThroughDaemon(lane.agent);
    if (!outcome.served && !fastLane<typeof import('./hook-lane.js')>('hook-lane.js').runHookLane(lane.agent, outcome.stdin)) await runFullCli();
  } else if (lane?.kind === 'session pre' || lane?.kind === 'session post') {
    const phase = lane.kind === 'session pre' ? 'pre' : 'post';
    if (!(await daemonLane().sessionThroughDaemon(phase, lane.flags)).served) {
      fastLane<typeof import('./session-lane.js')>('session-lane.js').runSessionLane(phase, lane.flags, true);
    }
  } else await runFullCli();
}

// A failure here (a lane missing from the build) ends the process as an uncaught error does.
void run();
