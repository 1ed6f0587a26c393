import * as path from 'node:path';

/** Where a store lives when nothing says otherwise: `.cairn/store` under the working directory. */
export const DEFAULT_STORE_DIR = path.join('.cairn', 'store');
