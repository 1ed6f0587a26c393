import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';
export default mergeConfig(base, defineConfig({ test: { globalSetup: ['./test/support/global-setup.ts'] } }));
