// The webhook's HTTP surface without the network: one route table, request in, response out. The HTTPS
// server (server.ts) streams bodies into it; tests and the fuzz test call it directly. `handle` never
// throws: bad input gets a 4xx with a message, and a failure while judging a well-formed review becomes an
// error inside the review, carrying the request's uid.

import { randomUUID } from 'node:crypto';

import type { Logger } from '../runtime/log.js';
import { CONTENT_TYPE as METRICS_CONTENT_TYPE, Registry, type Counter, type Histogram } from '../runtime/metrics.js';
import { truncate } from '../../api/validation/index.js';
import { BadRequestError, admissionReview, decodeAdmissionReview, errored } from './admission.js';
import { reviewConversion } from './conversion.js';
import { MAX_BODY_BYTES, MAX_RESPONSE_BYTES, boundMessage } from './limits.js';
import { mutateRequestSafely } from './mutating.js';
import { overrideRequestSafely, unmodifiedOverride, type OverrideSource } from './overriding.js';
import type { AdmissionResponse, ConversionReview } from './types.js';
import { EMPTY_INVENTORY, validateRequestSafely, type Inventory } from './validating.js';

export { MAX_BODY_BYTES };

export interface HttpRequest {
  method: string;
  /** Path and query, as on the request line (`/validate?timeout=5s`). */
  url: string;
  /** The Content-Type header; undefined when the request had none (a review is then refused with 415). */
  contentType?: string;
  body: Buffer | string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /**
   * A small answer to send instead when this one does not fit under the server's in-flight ceiling
   * (/override: admit unmodified); without it the server answers 503.
   */
  smaller?: (limitBytes: number) => HttpResponse;
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
  /** Largest answer in bytes; a review whose answer would be larger gets an error inside instead. */
  maxResponseBytes?: number;
  /** Told of every answer with status 500, with its cause (the server logs it). */
  logger?: Pick<Logger, 'error'> & Partial<Pick<Logger, 'warn'>>;
  /** Serve /override (admission-time overrides) from these policies; absent: no such route. */
  overrides?: OverrideSource;
}

type Outcome =
  | 'allowed'
  | 'patched'
  | 'denied'
  | 'error'
  | 'success'
  | 'failure'
  | 'ok'
  | 'unavailable'
  | 'overloaded'
  | 'bad_request'
  | 'too_large'
  | 'not_found'
  | 'method_not_allowed'
  | 'unsupported_media_type';

interface Route {
  /** GET routes answer HEAD as well, without a body. */
  method: 'GET' | 'POST';
  handle(body: string): { response: HttpResponse; outcome: Outcome };
}

const JSON_TYPE = 'application/json';

function json(status: number, value: unknown): HttpResponse {
  return { status, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(value) };
}

/** An HTTP-level error, in the shape of a metav1.Status so Kubernetes clients can read it. */
export function statusResponse(status: number, message: string): HttpResponse {
  return json(status, {
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code: status,
    message: boundMessage(message),
  });
}

/**
 * Whether a Content-Type header names JSON as the apiserver sends it: `application/json`, in any case,
 * with parameters allowed but a charset, when given, only UTF-8.
 */
export function isJSONContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type = '', ...params] = header.split(';');
  if (type.trim().toLowerCase() !== JSON_TYPE) return false;
  return params.every((param) => {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') return true;
    return /^"?utf-?8"?$/i.test(param.slice(eq + 1).trim());
  });
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
  private readonly maxResponseBytes: number;
  private readonly logger: (Pick<Logger, 'error'> & Partial<Pick<Logger, 'warn'>>) | undefined;

  constructor(opts: HandlerOptions = {}) {
    this.logger = opts.logger;
    const newId = opts.newId ?? randomUUID;
    const inventory = opts.inventory ?? EMPTY_INVENTORY;
    const ready = opts.ready ?? (() => true);
    this.maxBodyBytes = opts.maxBodyBytes ?? MAX_BODY_BYTES;
    this.maxResponseBytes = opts.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.registry = opts.registry ?? new Registry();
    this.requests = this.registry.counter('flotilla_webhook_requests_total', 'Webhook requests by path and outcome.', [
      'path',
      'outcome',
    ]);
    this.latency = this.registry.histogram(
      'flotilla_webhook_request_duration_seconds',
      'Time to answer a webhook request, from a complete body to a serialized response.',
      ['path', 'outcome'],
    );

    const unmodified = this.registry.counter(
      'flotilla_webhook_override_unmodified_total',
      'Objects /override admitted unmodified because the override could not be computed, by reason.',
      ['reason'],
    );

    this.routes = new Map<string, Route>([
      ...(opts.overrides ? [this.overrideRoute(opts.overrides, unmodified)] : []),
      ['/validate', { method: 'POST', handle: this.admission((r) => validateRequestSafely(r, { inventory })) }],
      ['/mutate', { method: 'POST', handle: this.admission((r) => mutateRequestSafely(r, { newId })) }],
      ['/convert', { method: 'POST', handle: (body) => this.convert(body) }],
      ['/healthz', { method: 'GET', handle: () => ({ response: text(200, 'ok'), outcome: 'ok' }) }],
      [
        '/readyz',
        {
          method: 'GET',
          handle: () =>
            ready()
              ? { response: text(200, 'ok'), outcome: 'ok' }
              : { response: text(503, 'not ready'), outcome: 'unavailable' },
        },
      ],
      [
        '/metrics',
        {
          method: 'GET',
          handle: () => ({ response: text(200, this.registry.render(), METRICS_CONTENT_TYPE), outcome: 'ok' }),
        },
      ],
    ]);
  }

  /**
   * An admission route: decode the review, judge it, answer. An answer that would be too large is an error
   * inside the review, unless `tooLarge` says otherwise; `smaller`, when given, is what to answer when the
   * server cannot hold the answer now.
   */
  private admission(
    judge: (r: Parameters<typeof validateRequestSafely>[0]) => AdmissionResponse,
    tooLarge: (uid: string, message: string) => AdmissionResponse = (uid, message) => errored(uid, 413, message),
    smaller?: (uid: string, message: string) => AdmissionResponse,
  ): Route['handle'] {
    return (body: string) => {
      const decoded = decodeAdmissionReview(parseJSON(body));
      const response = decoded.error ?? judge(decoded.request);
      const answered = this.answer(
        admissionReview(decoded.apiVersion, response),
        admissionOutcome(response),
        (message) => {
          const replaced = tooLarge(response.uid, message);
          return { review: admissionReview(decoded.apiVersion, replaced), outcome: admissionOutcome(replaced) };
        },
      );
      if (smaller !== undefined) {
        const bytes = Buffer.byteLength(answered.response.body);
        answered.response.smaller = (limit) =>
          json(
            200,
            admissionReview(
              decoded.apiVersion,
              smaller(
                response.uid,
                `the answer (${bytes} bytes) does not fit under the webhook's limit of ${limit} bytes for requests in flight now`,
              ),
            ),
          );
      }
      return answered;
    };
  }

  /** POST /override, from these policies; `unmodified` counts the objects admitted unmodified, by reason. */
  private overrideRoute(overrides: OverrideSource, unmodified: Counter): [string, Route] {
    return [
      '/override',
      {
        method: 'POST',
        // Safe to fail: an override too large to send admits the object unmodified, as any other
        // override that cannot be applied does.
        handle: this.admission(
          (r) =>
            overrideRequestSafely(r, {
              source: overrides,
              unmodified: (reason) => unmodified.inc({ reason }),
              warn: (message, object) =>
                this.logger?.warn?.('admission override: mutator not applied', { object, message }),
            }),
          (uid, message) => {
            unmodified.inc({ reason: 'too_large' });
            return unmodifiedOverride(uid, message);
          },
          (uid, message) => {
            unmodified.inc({ reason: 'overloaded' });
            return unmodifiedOverride(uid, message);
          },
        ),
      },
    ];
  }

  /** POST /convert: a ConversionReview answered, or a Failure when the answer would be too large. */
  private convert(body: string): { response: HttpResponse; outcome: Outcome } {
    const review = reviewConversion(parseJSON(body));
    return this.answer(
      review,
      review.response?.result.status === 'Success' ? 'success' : 'failure',
      (message): { review: ConversionReview; outcome: Outcome } => ({
        review: {
          ...review,
          response: {
            uid: review.response?.uid ?? '',
            convertedObjects: [],
            result: { status: 'Failure', message },
          },
        },
        outcome: 'failure',
      }),
    );
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

  /** The answer for a request the server has no memory left to take in or answer now: 503 with Retry-After. */
  overloaded(url: string, limitBytes: number, retryAfterSeconds: number): HttpResponse {
    const started = process.hrtime.bigint();
    const response = statusResponse(
      503,
      `the webhook holds its limit of ${limitBytes} bytes for requests in flight; retry in ${retryAfterSeconds} s`,
    );
    response.headers['retry-after'] = String(retryAfterSeconds);
    this.record(this.routeOf(url), 'overloaded', started);
    return response;
  }

  get bodyLimit(): number {
    return this.maxBodyBytes;
  }

  private dispatch(path: string | undefined, req: HttpRequest): { response: HttpResponse; outcome: Outcome } {
    const route = path === undefined ? undefined : this.routes.get(path);
    if (route === undefined)
      return { response: statusResponse(404, `no handler for ${req.url.split('?')[0] ?? ''}`), outcome: 'not_found' };
    const allowed = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
    if (!allowed.includes(req.method)) {
      const r = statusResponse(
        405,
        `${truncate(req.method, 64)} is not allowed on ${path}; use ${allowed.join(' or ')}`,
      );
      r.headers.allow = allowed.join(', ');
      return { response: r, outcome: 'method_not_allowed' };
    }
    if (route.method === 'POST' && !isJSONContentType(req.contentType)) {
      const got = req.contentType === undefined ? 'none' : JSON.stringify(truncate(req.contentType, 256));
      return {
        response: statusResponse(415, `Content-Type must be ${JSON_TYPE}, got ${got}`),
        outcome: 'unsupported_media_type',
      };
    }
    const size = typeof req.body === 'string' ? Buffer.byteLength(req.body) : req.body.length;
    if (size > this.maxBodyBytes)
      return {
        response: statusResponse(413, `request body is larger than ${this.maxBodyBytes} bytes`),
        outcome: 'too_large',
      };
    try {
      return route.handle(typeof req.body === 'string' ? req.body : req.body.toString('utf8'));
    } catch (e: unknown) {
      if (e instanceof BadRequestError) return { response: statusResponse(400, e.message), outcome: 'bad_request' };
      // Reviews catch their own failures; whatever still escapes is answered 500 and logged with its cause.
      const cause = e instanceof Error ? e.message : String(e);
      this.logger?.error('internal error answering a request', {
        path,
        error: boundMessage(cause),
        ...(e instanceof Error && e.stack ? { stack: e.stack.split('\n').slice(0, 12).join('\n') } : {}),
      });
      return { response: statusResponse(500, `internal error: ${boundMessage(cause)}`), outcome: 'error' };
    }
  }

  /** A 200 with `review` as JSON, or, when that would pass the response limit, the review `tooLarge` makes. */
  private answer<R>(
    review: R,
    outcome: Outcome,
    tooLarge: (message: string) => { review: R; outcome: Outcome },
  ): { response: HttpResponse; outcome: Outcome } {
    const response = json(200, review);
    const bytes = Buffer.byteLength(response.body);
    if (bytes <= this.maxResponseBytes) return { response, outcome };
    const replaced = tooLarge(
      `the answer would be ${bytes} bytes, more than the ${this.maxResponseBytes} this webhook sends`,
    );
    return { response: json(200, replaced.review), outcome: replaced.outcome };
  }

  private record(path: string | undefined, outcome: Outcome, started: bigint): void {
    const labels = { path: path ?? 'other', outcome };
    this.requests.inc(labels);
    this.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  }
}
