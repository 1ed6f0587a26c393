/** The hostile-tree matrix (./matrix.ts), first half: `.cairn/` and everything below it. */
import { defineMatrix } from './matrix.js';

defineMatrix('matrix .cairn', (component) => component === '.cairn' || component.startsWith('.cairn/'));
