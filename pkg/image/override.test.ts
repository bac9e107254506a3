import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ImageParseError, UnsupportedImageComponentError, overrideImage } from './index.js';

const DIGEST = `sha256:${'5a'.repeat(32)}`;
const OTHER_DIGEST = `sha256:${'e1'.repeat(32)}`;

interface OverrideCase {
  name: string;
  image: string;
  component: string;
  operator: string;
  value: string | undefined;
  want: string;
}

const cases: OverrideCase[] = [
  // Registry
  {
    name: 'registry add puts a registry in front of an image that has none',
    image: 'app:1.4',
    component: 'Registry',
    operator: 'add',
    value: 'mirror.example',
    want: 'mirror.example/app:1.4',
  },
  {
    name: 'registry add appends text to the hostname without a slash',
    image: 'hub.example/app:1.4',
    component: 'Registry',
    operator: 'add',
    value: '.cn',
    want: 'hub.example.cn/app:1.4',
  },
  {
    name: 'registry add keeps a port it is appended after',
    image: 'hub.example:5000/app',
    component: 'Registry',
    operator: 'add',
    value: '.local',
    want: 'hub.example:5000.local/app',
  },
  {
    name: 'registry replace swaps the hostname',
    image: 'hub.example/team/app:1.4',
    component: 'Registry',
    operator: 'replace',
    value: 'cache.internal:8443',
    want: 'cache.internal:8443/team/app:1.4',
  },
  {
    name: 'registry replace adds a hostname where there was none',
    image: 'team/app:1.4',
    component: 'Registry',
    operator: 'replace',
    value: 'cache.internal',
    want: 'cache.internal/team/app:1.4',
  },
  {
    name: 'registry replace with an empty value removes the hostname',
    image: 'hub.example/app:1.4',
    component: 'Registry',
    operator: 'replace',
    value: '',
    want: 'app:1.4',
  },
  {
    name: 'registry replace with no value removes the hostname',
    image: 'hub.example/app:1.4',
    component: 'Registry',
    operator: 'replace',
    value: undefined,
    want: 'app:1.4',
  },
  {
    name: 'registry remove drops the hostname and ignores the value',
    image: '[fd00::2]:5000/app:1.4',
    component: 'Registry',
    operator: 'remove',
    value: 'anything',
    want: 'app:1.4',
  },
  {
    name: 'registry remove on an image without one changes nothing',
    image: 'app:1.4',
    component: 'Registry',
    operator: 'remove',
    value: undefined,
    want: 'app:1.4',
  },
  // Repository
  {
    name: 'repository add appends text to the repository',
    image: 'hub.example/team/app:1.4',
    component: 'Repository',
    operator: 'add',
    value: '/sidecar',
    want: 'hub.example/team/app/sidecar:1.4',
  },
  {
    name: 'repository add with no value changes nothing',
    image: 'hub.example/app:1.4',
    component: 'Repository',
    operator: 'add',
    value: undefined,
    want: 'hub.example/app:1.4',
  },
  {
    name: 'repository replace swaps the whole path below the registry',
    image: 'hub.example/a/b/c/d:1.4',
    component: 'Repository',
    operator: 'replace',
    value: 'flat',
    want: 'hub.example/flat:1.4',
  },
  {
    name: 'repository replace keeps a digest',
    image: `hub.example/app@${DIGEST}`,
    component: 'Repository',
    operator: 'replace',
    value: 'other',
    want: `hub.example/other@${DIGEST}`,
  },
  {
    name: 'repository remove leaves the registry, a slash and the tag',
    image: 'hub.example/app:1.4',
    component: 'Repository',
    operator: 'remove',
    value: 'app',
    want: 'hub.example/:1.4',
  },
  {
    name: 'repository remove without a registry leaves only the tag',
    image: 'app:1.4',
    component: 'Repository',
    operator: 'remove',
    value: undefined,
    want: ':1.4',
  },
  // Tag
  {
    name: 'tag add appends text to the tag',
    image: 'app:1.4',
    component: 'Tag',
    operator: 'add',
    value: '-debug',
    want: 'app:1.4-debug',
  },
  {
    name: 'tag add on an untagged image sets the tag',
    image: 'hub.example/app',
    component: 'Tag',
    operator: 'add',
    value: 'v2',
    want: 'hub.example/app:v2',
  },
  {
    name: 'tag add of a digest to a tag is not a tag or digest and silently changes nothing',
    image: 'app:1.4',
    component: 'Tag',
    operator: 'add',
    value: DIGEST,
    want: 'app:1.4',
  },
  {
    name: 'tag add that would make the tag too long silently changes nothing',
    image: `app:${'t'.repeat(120)}`,
    component: 'Tag',
    operator: 'add',
    value: '-123456789',
    want: `app:${'t'.repeat(120)}`,
  },
  {
    name: 'tag add on a digest-only image appends to the digest',
    image: `app@${DIGEST}`,
    component: 'Tag',
    operator: 'add',
    value: 'ff',
    want: `app@${DIGEST}ff`,
  },
  {
    name: 'tag replace sets a new tag',
    image: 'app:1.4',
    component: 'Tag',
    operator: 'replace',
    value: '2.0',
    want: 'app:2.0',
  },
  {
    name: 'tag replace with a tag replaces a digest',
    image: `app@${DIGEST}`,
    component: 'Tag',
    operator: 'replace',
    value: 'stable',
    want: 'app:stable',
  },
  {
    name: 'tag replace with a digest replaces the tag',
    image: 'hub.example/app:1.4',
    component: 'Tag',
    operator: 'replace',
    value: OTHER_DIGEST,
    want: `hub.example/app@${OTHER_DIGEST}`,
  },
  {
    name: 'tag replace with a value that is neither silently changes nothing',
    image: 'app:1.4',
    component: 'Tag',
    operator: 'replace',
    value: 'not a tag',
    want: 'app:1.4',
  },
  {
    name: 'tag replace with an empty value silently changes nothing',
    image: 'app:1.4',
    component: 'Tag',
    operator: 'replace',
    value: '',
    want: 'app:1.4',
  },
  {
    name: 'tag remove drops the tag',
    image: 'hub.example/app:1.4',
    component: 'Tag',
    operator: 'remove',
    value: 'ignored',
    want: 'hub.example/app',
  },
  {
    name: 'tag remove drops a digest when there is no tag',
    image: `hub.example/app@${DIGEST}`,
    component: 'Tag',
    operator: 'remove',
    value: undefined,
    want: 'hub.example/app',
  },
  {
    name: 'tag remove of a tagged and digested image leaves neither',
    image: `app:1.4@${DIGEST}`,
    component: 'Tag',
    operator: 'remove',
    value: undefined,
    want: 'app',
  },
  // Operators Karmada does not know
  {
    name: 'an unknown operator changes nothing',
    image: 'hub.example/app:1.4',
    component: 'Registry',
    operator: 'merge',
    value: 'x.example',
    want: 'hub.example/app:1.4',
  },
  {
    name: 'an unknown operator still re-serialises, dropping a digest next to a tag',
    image: `app:1.4@${DIGEST}`,
    component: 'Tag',
    operator: 'Replace',
    value: '2.0',
    want: 'app:1.4',
  },
  {
    name: 'any override of a tagged and digested image drops the digest',
    image: `app:1.4@${DIGEST}`,
    component: 'Repository',
    operator: 'replace',
    value: 'web',
    want: 'web:1.4',
  },
];

void describe('overrideImage', () => {
  for (const c of cases) {
    void it(c.name, () => {
      assert.equal(overrideImage(c.image, c.component, c.operator, c.value), c.want);
    });
  }

  void it('throws ImageParseError with the image and the reason when the image does not parse', () => {
    assert.throws(
      () => overrideImage('Web:1', 'Tag', 'replace', '2'),
      (err: unknown) => {
        assert.ok(err instanceof ImageParseError);
        assert.equal(err.code, 'IMAGE_PARSE');
        assert.equal(err.message, 'failed to parse image value(Web:1), error: repository name must be lowercase');
        return true;
      },
    );
  });

  void it('throws UnsupportedImageComponentError for a component other than Registry, Repository or Tag', () => {
    assert.throws(
      () => overrideImage('app:1', 'registry', 'replace', 'r.example'),
      (err: unknown) => {
        assert.ok(err instanceof UnsupportedImageComponentError);
        assert.equal(err.code, 'IMAGE_COMPONENT');
        assert.equal(err.message, 'unsupported image component(registry)');
        return true;
      },
    );
  });

  void it('reports the parse error before an unknown component, as the image is read first', () => {
    assert.throws(() => overrideImage('app::1', 'Digest', 'add', 'x'), ImageParseError);
  });
});
