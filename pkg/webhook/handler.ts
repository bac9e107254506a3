// The webhook's HTTP surface without the network: one route table, request in, response out. The HTTPS
// server (server.ts) streams bodies into it; tests and the fuzz test call it directly. `handle` never
// throws: bad input gets a 4xx with a message, and a failure while judging a well-formed review becomes an
// error inside the review, carrying the request's uid.

import { randomUUID } from 'node:crypto';

import { CONTENT_TYPE as METRICS_CONTENT_TYPE, Registry, type Counter, type Histogram } from '../runtime/metrics.js';
import { BadRequestError, admissionReview, decodeAdmissionReview } from './admission.js';
import { reviewConversion } from './conversion.js';
import { mutateRequestSafely } from './mutating.js';
import type { AdmissionResponse } from './types.js';
import { EMPTY_INVENTORY, validateRequestSafely, type Inventory } from './validating.js';

/** Largest body accepted; the apiserver caps review bodies at 3 MiB as well. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface HttpRequest {
  method: string;
  /** Path and query, as on the request line (`/validate?timeout=5s`). */
  url: string;
  body: Buffer | string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface HandlerOptions {
  /** Permanent ids for new propagation policies; default crypto.randomUUID. */
  newId?: () => string;
  inventory?: Inventory;
  /** Where request metrics are registered; default a private registry. */
  registry?: Registry;
  /** /readyz answers 200 only while this returns true; default always. */
  ready?: () => boolean;
  maxBodyBytes?: number;
}

type Outcome = 'allowed' | 'patched' | 'denied' | 'error' | 'success' | 'failure' | 'ok' | 'unavailable' | 'bad_request' | 'too_large' | 'not_found' | 'method_not_allowed';

interface Route {
  method: 'GET' | 'POST';
  handle(body: string): { response: HttpResponse; outcome: Outcome };
}

const JSON_TYPE = 'application/json';

function json(status: number, value: unknown): HttpResponse {
  return { status, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(value) };
}

/** An HTTP-level error, in the shape of a metav1.Status so Kubernetes clients can read it. */
function statusResponse(status: number, message: string): HttpResponse {
  return json(status, { apiVersion: 'v1', kind: 'Status', status: 'Failure', code: status, message });
}

function text(status: number, body: string, contentType = 'text/plain; charset=utf-8'): HttpResponse {
  return { status, headers: { 'content-type': contentType }, body };
}

function parseJSON(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch (e: unknown) {
    throw new BadRequestError(`request body is not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

function admissionOutcome(r: AdmissionResponse): Outcome {
  if (r.allowed) return r.patch ? 'patched' : 'allowed';
  return r.status?.code === 403 ? 'denied' : 'error';
}

export class WebhookHandler {
  readonly registry: Registry;
  private readonly routes: ReadonlyMap<string, Route>;
  private readonly requests: Counter;
  private readonly latency: Histogram;
  private readonly maxBodyBytes: number;

  constructor(opts: HandlerOptions = {}) {
    const newId = opts.newId ?? randomUUID;
    const inventory = opts.inventory ?? EMPTY_INVENTORY;
    const ready = opts.ready ?? (() => true);
    this.maxBodyBytes = opts.maxBodyBytes ?? MAX_BODY_BYTES;
    this.registry = opts.registry ?? new Registry();
    this.requests = this.registry.counter('flotilla_webhook_requests_total', 'Webhook requests by path and outcome.', ['path', 'outcome']);
    this.latency = this.registry.histogram('flotilla_webhook_request_duration_seconds', 'Time to answer a webhook request, from a complete body to a serialized response.', ['path', 'outcome']);

    const admission = (judge: (r: Parameters<typeof validateRequestSafely>[0]) => AdmissionResponse) => (body: string) => {
      const decoded = decodeAdmissionReview(parseJSON(body));
      const response = decoded.error ?? judge(decoded.request);
      return { response: json(200, admissionReview(decoded.apiVersion, response)), outcome: admissionOutcome(response) };
    };

    this.routes = new Map<string, Route>([
      ['/validate', { method: 'POST', handle: admission((r) => validateRequestSafely(r, { inventory })) }],
      ['/mutate', { method: 'POST', handle: admission((r) => mutateRequestSafely(r, { newId })) }],
      [
        '/convert',
        {
          method: 'POST',
          handle: (body) => {
            const review = reviewConversion(parseJSON(body));
            return { response: json(200, review), outcome: review.response?.result.status === 'Success' ? 'success' : 'failure' };
          },
        },
      ],
      ['/healthz', { method: 'GET', handle: () => ({ response: text(200, 'ok'), outcome: 'ok' }) }],
      ['/readyz', { method: 'GET', handle: () => (ready() ? { response: text(200, 'ok'), outcome: 'ok' } : { response: text(503, 'not ready'), outcome: 'unavailable' }) }],
      ['/metrics', { method: 'GET', handle: () => ({ response: text(200, this.registry.render(), METRICS_CONTENT_TYPE), outcome: 'ok' }) }],
    ]);
  }

  /** The route for a request line's path (query ignored), or undefined. */
  routeOf(url: string): string | undefined {
    const q = url.indexOf('?');
    const path = q >= 0 ? url.slice(0, q) : url;
    return this.routes.has(path) ? path : undefined;
  }

  handle(req: HttpRequest): HttpResponse {
    const started = process.hrtime.bigint();
    const path = this.routeOf(req.url);
    const { response, outcome } = this.dispatch(path, req);
    this.record(path, outcome, started);
    return response;
  }

  /** The answer for a body over the limit, for a server that stopped reading it. */
  tooLarge(url: string): HttpResponse {
    const started = process.hrtime.bigint();
    const response = statusResponse(413, `request body is larger than ${this.maxBodyBytes} bytes`);
    this.record(this.routeOf(url), 'too_large', started);
    return response;
  }

  get bodyLimit(): number {
    return this.maxBodyBytes;
  }

  private dispatch(path: string | undefined, req: HttpRequest): { response: HttpResponse; outcome: Outcome } {
    const route = path === undefined ? undefined : this.routes.get(path);
    if (route === undefined) return { response: statusResponse(404, `no handler for ${req.url.split('?')[0] ?? ''}`), outcome: 'not_found' };
    if (req.method !== route.method) {
      const r = statusResponse(405, `${req.method} is not allowed on ${path}; use ${route.method}`);
      r.headers.allow = route.method;
      return { response: r, outcome: 'method_not_allowed' };
    }
    const size = typeof req.body === 'string' ? Buffer.byteLength(req.body) : req.body.length;
    if (size > this.maxBodyBytes) return { response: statusResponse(413, `request body is larger than ${this.maxBodyBytes} bytes`), outcome: 'too_large' };
    try {
      return route.handle(typeof req.body === 'string' ? req.body : req.body.toString('utf8'));
    } catch (e: unknown) {
      if (e instanceof BadRequestError) return { response: statusResponse(400, e.message), outcome: 'bad_request' };
      // Not reachable by design (reviews catch their own failures); kept so no input can escape as a throw.
      return { response: statusResponse(500, `internal error: ${e instanceof Error ? e.message : String(e)}`), outcome: 'error' };
    }
  }

  private record(path: string | undefined, outcome: Outcome, started: bigint): void {
    const labels = { path: path ?? 'other', outcome };
    this.requests.inc(labels);
    this.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  }
}

