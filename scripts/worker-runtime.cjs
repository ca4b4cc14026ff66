/**
 * How a worker process's Node is started, shared by every launcher: `npm run dev`
 * (scripts/dev.mjs), the resilience suite's stacks (test/resilience/lib/fault-stack.ts), the
 * benches (scripts/bench/certificates-worker.ts), and, written out, docker-compose.yml and
 * deploy/kubernetes/worker.yaml (test/unit/kubernetes-manifests.test.ts checks both against this).
 * CommonJS so both an ES module and the CommonJS code can load it.
 *
 * `--max-old-space-size=384` (MiB): V8 sizes a heap by how fast it allocates, not by what it
 * keeps. Uncapped (about 4 GiB on a 24 GiB machine), the worker's heaps kept growing while it
 * issued certificates although what they held did not: heap snapshots after 100 and after 1 626
 * certificates held 111 and 114 MiB, while the process's RSS went from 541 to 813 MiB. With the
 * cap (it applies to the workflow thread too) the RSS stays within a few percent from the first
 * hundred certificates on, at the same speed. 384 is about three times the live heap; the
 * bordereau writer's threads have caps of their own.
 */
'use strict';

/** Node flags of a worker process, before its entry point (`node <flags> dist/src/worker.js`, `tsx <flags> src/worker.ts`). */
const WORKER_NODE_ARGS = Object.freeze(['--max-old-space-size=384']);

module.exports = { WORKER_NODE_ARGS };
