#!/usr/bin/env node
// One `session pre` through the library, with content capture on or off (today's pre without
// it), so bench/rewind.mjs compares the two in identical fresh processes.
//   node rewind-pre.mjs <dist/index.js> <root> <iteration-dir> on|off
const [index, root, iterationDir, content] = process.argv.slice(2);
const { SnapshotManager } = await import(index);
new SnapshotManager(root, { content: content === 'on' }).capturePreSnapshot(root, iterationDir);
