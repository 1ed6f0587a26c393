/**
 * Set by a process that stays (`cairn daemon`, src/cli/daemon/server.ts): the session commands and
 * the agent hook then take their captures with its resident manager (the tree watcher and git's
 * last answer, watched-manager.ts) instead of a fresh SnapshotManager, and start no `git status`
 * ahead of the library (the resident manager decides whether git must run at all).
 */
import type { SnapshotManager } from '../session/capture/snapshot-manager.js';
import type { SnapshotManagerOptions } from '../session/types.js';

export type ManagerFactory = (projectRoot: string, options: SnapshotManagerOptions) => SnapshotManager;

let resident: ManagerFactory | null = null;

/** Makes `factory` give every capture of this process its manager (null: back to fresh ones). */
export function serveWithResidentManagers(factory: ManagerFactory | null): void {
  resident = factory;
}

/** The resident factory of this process, or null (every short-lived process). */
export function residentManagerFactory(): ManagerFactory | null {
  return resident;
}

/** `factory` in the shape of the SnapshotManager class (`new M(root, options)`), for code written against the class. */
export function asManagerClass<C extends typeof SnapshotManager>(factory: ManagerFactory): C {
  return function ResidentSnapshotManager(root: string, options: SnapshotManagerOptions = {}) {
    return factory(root, options);
  } as unknown as C;
}
