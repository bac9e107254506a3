// Reading client-node's failures (ApiException). Imports @kubernetes/client-node: load it only where a command
// talks to an apiserver.

import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a failed API call; undefined for failures that never got a response. */
export function httpStatus(e: unknown): number | undefined {
  return e instanceof ApiException ? e.code : undefined;
}

/** A readable message for a client-node failure: `HTTP 404: <the Status message>`, or the error's message. */
export function describeKubeError(e: unknown): string {
  if (e instanceof ApiException) {
    const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
    let message = body;
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      // not JSON: keep the raw body
    }
    return `HTTP ${e.code}: ${message}`;
  }
  return e instanceof Error ? e.message : String(e);
}
