import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  regexError,
  validateAnnotations,
  validateLabels,
} from './names.js';

const NAME_PART_CHARS =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const SUBDOMAIN_CHARS =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('regexError', () => {
  it('separates examples with a comma and " or ", which leaves two spaces as Kubernetes prints them', () => {
    assert.equal(regexError('bad', 'x+', 'a', 'b'), "bad (e.g. 'a',  or 'b', regex used for validation is 'x+')");
  });
  it('names only the regex when there are no examples', () => {
    assert.equal(regexError('bad', 'x+'), "bad (regex used for validation is 'x+')");
  });
});

describe('isQualifiedName', () => {
  const cases: Array<[string, string, string[]]> = [
    ['accepts a plain name', 'app', []],
    ['accepts a DNS prefix', 'example.com/app-name', []],
    ['accepts upper case in the name part', 'MyName', []],
    ['rejects a leading dash', '-app', [NAME_PART_CHARS]],
    ['rejects a tilde', 'testannotation~projectId', [NAME_PART_CHARS]],
    ['rejects an empty name', '', ['name part must be non-empty', NAME_PART_CHARS]],
    ['rejects a 64-byte name on length alone', 'a'.repeat(64), ['name part must be no more than 63 bytes']],
    ['rejects an empty prefix', '/app', ['prefix part must be non-empty']],
    ['rejects an upper-case prefix', 'INVALID.COM/app', [`prefix part ${SUBDOMAIN_CHARS}`]],
    [
      'rejects two slashes with one message',
      'a/b/c',
      [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.deepEqual(isQualifiedName(value), want));
});

describe('isValidLabelValue', () => {
  const chars =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  const cases: Array<[string, string, string[]]> = [
    ['accepts the empty string', '', []],
    ['accepts dots, dashes and underscores inside', 'a.b-c_d', []],
    ['rejects a trailing dash', 'abc-', [chars]],
    ['rejects a slash', 'a/b', [chars]],
    ['rejects 64 bytes', 'a'.repeat(64), ['must be no more than 63 bytes']],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.deepEqual(isValidLabelValue(value), want));
});

describe('DNS names', () => {
  it('accepts a dotted subdomain', () => assert.deepEqual(isDNS1123Subdomain('a.b-c.example'), []));
  it('rejects an upper-case subdomain with the subdomain message', () =>
    assert.deepEqual(isDNS1123Subdomain('Web'), [SUBDOMAIN_CHARS]));
  it('rejects a subdomain longer than 253 bytes', () => {
    const long = Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.');
    assert.deepEqual(isDNS1123Subdomain(long), ['must be no more than 253 bytes']);
  });
  it('says a label must not contain dots when that is its only fault', () =>
    assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']));
  it('rejects an underscore in a label with the label message', () => {
    assert.deepEqual(isDNS1123Label('a_b'), [
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
});

describe('validateLabels', () => {
  it('reports key and value problems at the map, naming the offending key or value', () => {
    const errs = validateLabels(
      [
        ['ok', 'fine'],
        ['bad~key', 'fine'],
        ['k', '-v'],
      ],
      'metadata.labels',
    );
    assert.deepEqual(
      errs.map((e) => [e.field, e.value]),
      [
        ['metadata.labels', 'bad~key'],
        ['metadata.labels', '-v'],
      ],
    );
  });
  it('checks the stand-in value when the caller supplies one', () => {
    assert.deepEqual(
      validateLabels([['k', '${cluster.name}']], 'v', () => 'x'),
      [],
    );
  });
});

describe('validateAnnotations', () => {
  it('compares keys case-insensitively but shows the key as written', () => {
    assert.deepEqual(validateAnnotations([['Example.COM/Key', 'v']], 'a'), []);
    const [err] = validateAnnotations([['Bad Key', 'v']], 'a');
    assert.equal(err?.value, 'Bad Key');
  });
  it('limits keys plus values to 256 KiB in total', () => {
    const half = 'x'.repeat(128 * 1024);
    assert.deepEqual(
      validateAnnotations(
        [
          ['a', half],
          ['b', half.slice(2)],
        ],
        'm',
      ),
      [],
    );
    assert.deepEqual(
      validateAnnotations(
        [
          ['a', half],
          ['b', half],
        ],
        'm',
      ),
      [{ type: 'Too long', field: 'm', value: '', detail: 'may not be more than 262144 bytes' }],
    );
  });
});
