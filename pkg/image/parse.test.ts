import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  ImageParseError,
  formatImage,
  isDigest,
  isTag,
  parseImage,
  splitHostname,
  type ImageReference,
} from './parse.js';

const SHA256_A = `sha256:${'3f'.repeat(32)}`;
const SHA256_B = `sha256:${'0c'.repeat(32)}`;
const SHA512 = `sha512:${'9e'.repeat(64)}`;

function ref(hostname: string, repository: string, tag = '', digest = ''): ImageReference {
  return { hostname, repository, tag, digest };
}

interface ParseCase {
  name: string;
  input: string;
  want: ImageReference;
}

const parsed: ParseCase[] = [
  {
    name: 'a bare name has neither registry nor tag, and gets no docker.io default',
    input: 'busybox',
    want: ref('', 'busybox'),
  },
  { name: 'a bare name with a tag keeps the tag', input: 'busybox:1.36-musl', want: ref('', 'busybox', '1.36-musl') },
  {
    name: 'a first segment without a dot or colon belongs to the repository',
    input: 'payments/ledger:3',
    want: ref('', 'payments/ledger', '3'),
  },
  {
    name: 'a dotted first segment is the registry',
    input: 'quay.example.org/ops/backup:nightly',
    want: ref('quay.example.org', 'ops/backup', 'nightly'),
  },
  {
    name: 'a registry with a port keeps the port in the hostname',
    input: 'registry.internal:8443/platform/api:v2',
    want: ref('registry.internal:8443', 'platform/api', 'v2'),
  },
  {
    name: 'a host and port with nothing below them as a name and a tag',
    input: 'registry.example:5000',
    want: ref('', 'registry.example', '5000'),
  },
  {
    name: 'a port without a tag is not mistaken for a tag',
    input: 'registry.internal:8443/platform/api',
    want: ref('registry.internal:8443', 'platform/api'),
  },
  {
    name: 'localhost alone is a registry',
    input: 'localhost/tools/debug:dev',
    want: ref('localhost', 'tools/debug', 'dev'),
  },
  {
    name: 'localhost with a port is a registry',
    input: 'localhost:32000/tools/debug',
    want: ref('localhost:32000', 'tools/debug'),
  },
  {
    name: 'an IPv4 registry with a port',
    input: '192.168.7.20:5000/cache/alpine:3.20',
    want: ref('192.168.7.20:5000', 'cache/alpine', '3.20'),
  },
  {
    name: 'an IPv6 registry with a port',
    input: '[2001:db8::7]:5000/mirror/redis:7.2',
    want: ref('[2001:db8::7]:5000', 'mirror/redis', '7.2'),
  },
  { name: 'an IPv6 registry without a port', input: '[fd00::1]/edge/agent', want: ref('[fd00::1]', 'edge/agent') },
  {
    name: 'a path deeper than three parts stays whole',
    input: 'ghcr.io/acme/team/svc/worker/v2:2024.05.1',
    want: ref('ghcr.io', 'acme/team/svc/worker/v2', '2024.05.1'),
  },
  {
    name: 'a registry may be written in capitals, the repository may not',
    input: 'Registry.Example.COM/app',
    want: ref('Registry.Example.COM', 'app'),
  },
  {
    name: 'separators inside a component: dot, one or two underscores, runs of dashes',
    input: 'a.b_c__d---e',
    want: ref('', 'a.b_c__d---e'),
  },
  {
    name: 'a digest without a tag is kept',
    input: `ghcr.io/acme/api@${SHA256_A}`,
    want: ref('ghcr.io', 'acme/api', '', SHA256_A),
  },
  { name: 'a sha512 digest is accepted', input: `api@${SHA512}`, want: ref('', 'api', '', SHA512) },
  {
    name: 'a tag next to a digest wins and the digest is dropped',
    input: `ghcr.io/acme/api:1.9@${SHA256_B}`,
    want: ref('ghcr.io', 'acme/api', '1.9'),
  },
  {
    name: 'a tag may start with an underscore and hold capitals',
    input: 'app:_Build.7-rc',
    want: ref('', 'app', '_Build.7-rc'),
  },
  {
    name: 'a tag of 128 characters is the longest allowed',
    input: `app:${'t'.repeat(128)}`,
    want: ref('', 'app', 't'.repeat(128)),
  },
  { name: 'a path of 255 characters is the longest allowed', input: 'p'.repeat(255), want: ref('', 'p'.repeat(255)) },
  {
    name: 'the registry does not count towards the 255 characters',
    input: `mirror.example/${'p'.repeat(255)}`,
    want: ref('mirror.example', 'p'.repeat(255)),
  },
];

void describe('parseImage', () => {
  for (const c of parsed) {
    void it(`reads ${c.name}`, () => {
      assert.deepEqual(parseImage(c.input), c.want);
    });
  }

  void it('returns a fresh object each time, so callers may change it', () => {
    const first = parseImage('app:1');
    first.tag = '2';
    assert.equal(parseImage('app:1').tag, '1');
  });
});

interface ErrorCase {
  name: string;
  input: string;
  reason: string;
}

const INVALID = 'invalid reference format';
const UPPERCASE = 'repository name must be lowercase';

const rejected: ErrorCase[] = [
  { name: 'the empty string', input: '', reason: 'repository name must have at least one component' },
  { name: 'a capital letter in a bare name', input: 'MyApp:1', reason: UPPERCASE },
  { name: 'a capital letter in the path below a registry', input: 'registry.example/Team/app', reason: UPPERCASE },
  { name: 'a name that Go lowercases to ASCII (dotted capital I)', input: 'İmage', reason: UPPERCASE },
  { name: 'an empty tag', input: 'app:', reason: INVALID },
  { name: 'two tags', input: 'app:1:2', reason: INVALID },
  { name: 'a tag that starts with a dash', input: 'app:-rc', reason: INVALID },
  { name: 'a tag of 129 characters', input: `app:${'t'.repeat(129)}`, reason: INVALID },
  { name: 'an empty digest', input: 'app@', reason: INVALID },
  { name: 'a digest with too few hex digits for the grammar', input: `app@sha256:${'a'.repeat(31)}`, reason: INVALID },
  { name: 'a leading slash', input: '/app', reason: INVALID },
  { name: 'a trailing slash', input: 'team/app/', reason: INVALID },
  { name: 'an empty path component', input: 'team//app', reason: INVALID },
  { name: 'a component that starts with a separator', input: '-app', reason: INVALID },
  { name: 'a component that ends with a separator', input: 'app_', reason: INVALID },
  { name: 'two dots in a row', input: 'a..b', reason: INVALID },
  { name: 'three underscores in a row', input: 'a___b', reason: INVALID },
  { name: 'a port that is not a number', input: 'registry.example:https/app', reason: INVALID },
  { name: 'a registry label that ends with a dash', input: 'registry-.example/app', reason: INVALID },
  { name: 'an empty IPv6 literal', input: '[]:5000/app', reason: INVALID },
  { name: 'an IPv6 literal with a non-hex letter', input: '[fd00::g]/app', reason: INVALID },
  { name: 'a registry with a port and nothing below it', input: 'registry.example:5000/', reason: INVALID },
  { name: 'white space', input: ' app', reason: INVALID },
  {
    name: 'a path of 256 characters',
    input: 'p'.repeat(256),
    reason: 'repository name must not be more than 255 characters',
  },
  {
    name: 'a sha256 digest of the wrong length',
    input: `app@sha256:${'a'.repeat(40)}`,
    reason: 'invalid checksum digest length',
  },
  {
    name: 'a sha256 digest in capital hex',
    input: `app@sha256:${'A'.repeat(64)}`,
    reason: 'invalid checksum digest format',
  },
  {
    name: 'an algorithm go-digest does not know',
    input: `app@md5:${'a'.repeat(32)}`,
    reason: 'unsupported digest algorithm',
  },
  {
    name: 'an algorithm written in capitals',
    input: `app@SHA256:${'a'.repeat(64)}`,
    reason: 'invalid checksum digest format',
  },
];

void describe('parseImage errors', () => {
  for (const c of rejected) {
    void it(`rejects ${c.name} with "${c.reason}"`, () => {
      assert.throws(
        () => parseImage(c.input),
        (err: unknown) => {
          assert.ok(err instanceof ImageParseError);
          assert.equal(err.code, 'IMAGE_PARSE');
          assert.equal(err.reason, c.reason);
          assert.equal(err.image, c.input);
          assert.equal(err.message, `failed to parse image value(${c.input}), error: ${c.reason}`);
          return true;
        },
      );
    });
  }
});

void describe('formatImage', () => {
  // A tag next to a digest is the one input that does not come back: the digest was dropped.
  const roundTrips = parsed.filter((c) => !(c.want.tag !== '' && c.input.includes('@')));
  for (const c of roundTrips) {
    void it(`gives back the input it parsed from for ${c.name}`, () => {
      assert.equal(formatImage(parseImage(c.input)), c.input);
    });
  }

  const cases: Array<{ name: string; ref: ImageReference; want: string }> = [
    {
      name: 'prefers the tag when both tag and digest are set',
      ref: ref('r.example', 'app', 'v1', SHA256_A),
      want: 'r.example/app:v1',
    },
    {
      name: 'writes the digest after an @ when there is no tag',
      ref: ref('', 'app', '', SHA256_A),
      want: `app@${SHA256_A}`,
    },
    { name: 'keeps the slash when the repository is empty', ref: ref('r.example', '', 'v1'), want: 'r.example/:v1' },
    { name: 'writes a bare repository when nothing else is set', ref: ref('', 'app'), want: 'app' },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.equal(formatImage(c.ref), c.want);
    });
  }
});

void describe('splitHostname', () => {
  const cases: Array<{ name: string; input: string; hostname: string; repository: string }> = [
    { name: 'an empty name gives two empty parts', input: '', hostname: '', repository: '' },
    { name: 'a single component is all repository', input: 'app', hostname: '', repository: 'app' },
    {
      name: 'a plain first component is part of the repository',
      input: 'team/app',
      hostname: '',
      repository: 'team/app',
    },
    {
      name: 'a first component with a dot is the hostname',
      input: 'r.example/team/app',
      hostname: 'r.example',
      repository: 'team/app',
    },
    {
      name: 'a first component with a port is the hostname',
      input: 'registry:5000/app',
      hostname: 'registry:5000',
      repository: 'app',
    },
    {
      name: 'an IP address with a port is the hostname',
      input: '10.1.2.3:5000/a/b',
      hostname: '10.1.2.3:5000',
      repository: 'a/b',
    },
    { name: 'localhost is the hostname', input: 'localhost/app', hostname: 'localhost', repository: 'app' },
    {
      name: 'a word that only starts with localhost is not',
      input: 'localhostx/app',
      hostname: '',
      repository: 'localhostx/app',
    },
    { name: 'only the first slash splits', input: 'r.example/a.b/c', hostname: 'r.example', repository: 'a.b/c' },
  ];
  for (const c of cases) {
    void it(`splits so that ${c.name}`, () => {
      assert.deepEqual(splitHostname(c.input), { hostname: c.hostname, repository: c.repository });
    });
  }
});

void describe('isTag and isDigest', () => {
  const cases: Array<{ value: string; tag: boolean; digest: boolean }> = [
    { value: 'v1.2.3', tag: true, digest: false },
    { value: '', tag: false, digest: false },
    { value: '.hidden', tag: false, digest: false },
    { value: SHA256_A, tag: false, digest: true },
    { value: `md5+b64:${'a'.repeat(32)}`, tag: false, digest: true },
    { value: `sha256:${'a'.repeat(31)}`, tag: false, digest: false },
    { value: `1sha:${'a'.repeat(32)}`, tag: false, digest: false },
  ];
  for (const c of cases) {
    void it(`classifies "${c.value}" as tag=${c.tag}, digest=${c.digest}`, () => {
      assert.equal(isTag(c.value), c.tag);
      assert.equal(isDigest(c.value), c.digest);
    });
  }
});
