import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseHost } from './names.js';

void describe('parseHost', () => {
  const accepted: Array<[string, 'dns' | 'ip']> = [
    ['hook', 'dns'],
    ['hook.example.com', 'dns'],
    ['Hook.Example.COM', 'dns'],
    ['a-b.c0', 'dns'],
    ['xn--bcher-kva.example', 'dns'],
    ['*.example.com', 'dns'],
    ['1.2.3.example', 'dns'],
    [`${'a'.repeat(63)}.example`, 'dns'],
    ['127.0.0.1', 'ip'],
    ['10.0.0.1', 'ip'],
    ['::1', 'ip'],
    ['2001:db8::1', 'ip'],
    ['::ffff:1.2.3.4', 'ip'],
  ];
  for (const [host, type] of accepted) {
    void it(`reads ${JSON.stringify(host)} as ${type === 'dns' ? 'a DNS name' : 'an IP address'}`, () => {
      assert.deepStrictEqual(parseHost(host), { type, value: host });
    });
  }

  const rejected: Array<[string, RegExp]> = [
    ['', /is empty/],
    ['a b', /characters other than letters, digits and "-": "a b"/],
    ['-bad-', /starts or ends with "-": "-bad-"/],
    ['bad-.example', /starts or ends with "-"/],
    ['host_name', /characters other than/],
    ['300.1.1.1', /looks like an IPv4 address but is not one/],
    ['1.2.3', /looks like an IPv4 address/],
    ['010.1.1.1', /looks like an IPv4 address/],
    ['example.123', /all-numeric label/],
    ['a..b', /empty label/],
    ['.example', /empty label/],
    ['example.com.', /ends with "\."/],
    ['*', /bare "\*"/],
    ['a.*.com', /"\*" in a label other than the first/],
    ['*a.example.com', /"\*" inside a label/],
    ['*.*.example.com', /"\*" in a label other than the first/],
    [`${'a'.repeat(64)}.example`, /label longer than 63/],
    [`${'a.'.repeat(126)}ab`, /longer than 253/],
    ['[::1]', /characters other than/],
    ['fe80::1%eth0', /zone index/],
    ['https://hook.example', /characters other than/],
  ];
  for (const [host, problem] of rejected) {
    void it(`rejects ${JSON.stringify(host.length > 40 ? `${host.slice(0, 20)}…` : host)}, saying why`, () => {
      const parsed = parseHost(host);
      assert.equal(parsed.type, 'invalid');
      assert.match(parsed.type === 'invalid' ? parsed.problem : '', problem);
    });
  }
});
