/**
 * The time budget of a test that runs whole processes (spawns, kills, servers). Such tests are
 * bounded by work (a number of kills, rounds, writers); the budget is only the net that catches a
 * hang, so it is generous enough for a machine with every core busy (CI runs these tests once
 * under that load: scripts/ci/under-load.sh). Never a claim about speed.
 */
export const WHOLE_PROCESS_BUDGET_MS = 600_000;
