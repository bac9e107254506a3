// Names, label keys and values, DNS names and annotation size, with the exact messages of
// k8s.io/apimachinery/pkg/util/validation (and the metav1 / core wrappers that turn them into field errors),
// so a denial reads the same as the one the API server gives for the same value.

import { invalid, type FieldError } from './errors.js';
import { byteLength } from './shape.js';

const QNAME_CHAR = '[A-Za-z0-9]';
const QNAME_EXT_CHAR = '[-A-Za-z0-9_.]';
const QUALIFIED_NAME_FMT = `(${QNAME_CHAR}${QNAME_EXT_CHAR}*)?${QNAME_CHAR}`;
const QUALIFIED_NAME_ERR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX = 63;
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FMT}$`);

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX = 63;
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FMT}$`);

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_MAX = 63;
const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

/** Total size of an object's annotations (keys plus values), as the API server limits it. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/**
 * apimachinery's RegexError. Each example is followed by `', '` and joined with `' or '`, hence the two
 * spaces in `'MyName',  or 'my.name'` — kept, because users compare these messages with the API server's.
 */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += ' or ';
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

export const emptyError = (): string => 'must be non-empty';
export const maxLenError = (n: number): string => `must be no more than ${n} bytes`;

/** IsQualifiedName: `[prefix/]name`, prefix a DNS-1123 subdomain, name ≤ 63 bytes. Label keys use it too. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  if (!QUALIFIED_NAME.test(name))
    errs.push(`name part ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!DNS1123_LABEL.test(value)) {
    // Every label is a subdomain, so a valid subdomain that is not a label can only be failing on its dots.
    if (DNS1123_SUBDOMAIN.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN.test(value))
    errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** metav1validation.ValidateLabelName: one `Invalid value` per problem, at `field`, naming the key. */
export function validateLabelName(name: string, field: string): FieldError[] {
  return isQualifiedName(name).map((m) => invalid(field, name, m));
}

/**
 * metav1validation.ValidateLabels: keys as qualified names, values as label values; every error at
 * `field` (the map), as Kubernetes reports it. `valueForCheck` lets a caller check a stand-in for a value
 * (a templated value with its variables sampled) while the error still shows what the user wrote.
 */
export function validateLabels(
  labels: ReadonlyArray<readonly [string, string]>,
  field: string,
  valueForCheck: (value: string) => string = (v) => v,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of labels) {
    errs.push(...validateLabelName(k, field));
    for (const m of isValidLabelValue(valueForCheck(v))) errs.push(invalid(field, v, m));
  }
  return errs;
}

/**
 * apivalidation.ValidateAnnotations: keys are qualified names compared case-insensitively (lower-cased
 * first; the error shows the key as written), and keys plus values may total at most 256 KiB.
 */
export function validateAnnotations(
  annotations: ReadonlyArray<readonly [string, string]>,
  field: string,
): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of annotations) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(field, k, m));
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errs.push({
      type: 'Too long',
      field,
      value: '',
      detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
    });
  }
  return errs;
}
