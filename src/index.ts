export * from './core/index.js';
export * from './inventory/index.js';
export * from './session/index.js';
export * from './store/index.js';
export * from './stage/index.js';
export * from './content/index.js';
export * from './rewind/index.js';
