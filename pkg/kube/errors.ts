// Errors of member access. Messages never carry credentials: they name files, contexts, servers
// (scheme://host:port, no user info) and what the apiserver said, never tokens, keys or file contents.

import { CodedError } from '../../api/internal/errors.js';

/**
 * Why a kubeconfig cannot be used. NONE: no source applies (no --kubeconfig, $KUBECONFIG, ~/.kube/config
 * or service account); UNREADABLE: a file is missing or malformed; NO_CONTEXT: the context is unset or
 * unknown, or names a cluster or user that is not defined, or a server that is not a URL.
 */
export type KubeconfigErrorCode = 'NONE' | 'UNREADABLE' | 'NO_CONTEXT';

/** A kubeconfig that cannot be read or used (missing file, bad YAML, unknown context, no server). */
export class KubeconfigError extends CodedError<KubeconfigErrorCode> {
  constructor(code: KubeconfigErrorCode, message: string, options?: { cause?: unknown }) {
    super('KubeconfigError', code, message, options);
  }
}

/**
 * The request never got an HTTP answer: connection refused or reset, DNS, TLS, timeout. The member is
 * treated as unreachable.
 */
export class TransportError extends Error {
  readonly code = 'TRANSPORT';
  /** Node's error code (ECONNREFUSED, ETIMEDOUT, CERT_HAS_EXPIRED, …) when there is one. */
  readonly errno: string | undefined;
  constructor(message: string, errno: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
    this.errno = errno;
  }
}

/** The apiserver answered with an error status; `message` is the Status message it sent. */
export class ApiError extends Error {
  readonly code = 'API';
  readonly status: number;
  /** metav1.Status reason (NotFound, Conflict, Invalid, …), '' when the body was not a Status. */
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.reason = reason;
  }
}

/** The member serves no resource for an apiVersion and kind. */
export class UnknownKindError extends Error {
  readonly code = 'UNKNOWN_KIND';
  constructor(message: string) {
    super(message);
    this.name = 'UnknownKindError';
  }
}

/** `https://host:port` of a server URL, without user info, path or query (for messages). */
export function displayServer(server: string): string {
  try {
    const u = new URL(server);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '<invalid server URL>';
  }
}
