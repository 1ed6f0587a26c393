#!/usr/bin/env node
/**
 * The `cairn` executable. It turns on V8's compile cache before the CLI is loaded: a static import
 * of main.js would be compiled before the first line here runs, so the CLI comes in by import().
 */
import { enableCompileCache } from '../core/compile-cache.js';

enableCompileCache();
const { runAsProcess } = await import('./main.js');
runAsProcess();
