/**
 * The workflow bundle's entry: every workflow the worker runs is exported from here.
 * Deterministic code only (STYLE practice 1). The purchase and certificate workflows join
 * this file with their issues; until then the bundle registers no workflow types.
 */
export {};
