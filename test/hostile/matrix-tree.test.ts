/** The hostile-tree matrix (./matrix.ts), second half: state dir, key files, stage notes, hook settings, outputs. */
import { defineMatrix } from './matrix.js';

defineMatrix('matrix tree', (component) => component !== '.cairn' && !component.startsWith('.cairn/'));
