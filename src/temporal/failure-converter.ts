/**
 * The failure converter of every Temporal client and worker of the service (loaded by path,
 * `failureConverterPath`, because workflow code runs in the worker's sandbox): Temporal's
 * default converter with `encodeCommonAttributes`, which moves a failure's message and stack
 * trace into an encoded payload, so they go through the payload codec (./codec.ts) and reach the
 * Temporal server encrypted like every other payload. An error message that quotes buyer data
 * (an address the processor rejected, a storage error naming a file) never lands in a history
 * in clear; the history then shows "Encoded failure" until the codec endpoint decodes it.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
