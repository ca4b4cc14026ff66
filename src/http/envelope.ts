/**
 * The `/api/v1` response envelope (spec §2.5), built in one place.
 *
 * Success: `{ success: true, data, message }`, list responses add `metadata`.
 * Error: `{ success: false, error: { code, message } }` (plus `details` for field-level
 * validation problems: an addition that keeps the spec's shape).
 */
import type { AppError } from '../shared/errors';

export interface ListMetadata {
  total: number;
  count: number;
  pagination: { pageSize: number; pageIndex: number };
  hasMore?: boolean;
}

export interface SuccessBody<T> {
  success: true;
  data: T;
  message: string;
  metadata?: ListMetadata;
}

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; details?: { path: string; message: string }[] };
}

export function ok<T>(data: T, message: string, metadata?: ListMetadata): SuccessBody<T> {
  return metadata ? { success: true, data, message, metadata } : { success: true, data, message };
}

export function errorBody(err: Pick<AppError, 'code' | 'message' | 'details'>): ErrorBody {
  const error: ErrorBody['error'] = { code: err.code, message: err.message };
  if (err.details?.length) error.details = err.details;
  return { success: false, error };
}
