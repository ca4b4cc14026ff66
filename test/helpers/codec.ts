/**
 * The remote codec's side of the tests (the operators' codec endpoint, `POST /codec/decode|encode`):
 * payloads in the endpoint's JSON shape, and a workflow whose stored history holds an input as the
 * service's payload codec wrote it.
 */
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { Client, WorkflowHandle } from '@temporalio/client';

/** A payload in the remote-codec JSON shape: metadata values and data base64-encoded. */
export function codecJson(p: Payload) {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
    data: Buffer.from(p.data!).toString('base64'),
  };
}

/** `value` as a json/plain (never encrypted) payload in the remote-codec JSON shape. */
export function jsonPayload(value: unknown) {
  return codecJson(defaultPayloadConverter.toPayload(value));
}

/**
 * Starts workflow `type` with `input` through `client` on a task queue nobody polls, so its history
 * is the start event alone with the input as the client's codec stored it; runs `fn` with the
 * handle and terminates the workflow afterwards (`reason`), whatever `fn` did. Answers what `fn` answers.
 */
export async function withUnpolledWorkflow<T>(
  client: Client,
  type: string,
  input: unknown,
  reason: string,
  fn: (handle: WorkflowHandle) => Promise<T>,
): Promise<T> {
  const handle = await client.workflow.start(type, {
    workflowId: `${type}-${process.pid}-${Date.now()}`,
    taskQueue: `${type}-unpolled-${process.pid}`,
    args: [input],
  });
  try {
    return await fn(handle);
  } finally {
    await handle.terminate(reason);
  }
}
