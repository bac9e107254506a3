// The quickstart's README promises what each cluster gets; this holds the example to it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { at } from '../../test/builders.js';
import { render } from '../index.js';
import { readYamlStream } from '../yaml/index.js';

const dir = fileURLToPath(new URL('../../../examples/quickstart/', import.meta.url));
const objects = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => readYamlStream(readFileSync(join(dir, f), 'utf8')).documents.map((d) => d.value));
const result = render({ objects });
const find = (kind: string, cluster: string): unknown =>
  result.placements.find((p) => p.cluster === cluster && p.object.kind === kind)?.object;

describe('examples/quickstart', () => {
  it('renders without errors or unmatched templates', () => {
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.unmatched, []);
  });

  it('divides the 8 replicas 4/2/2 by the 2:1:1 weights', () => {
    assert.deepEqual(
      ['eu-west', 'us-east', 'dev'].map((c) => at(find('Deployment', c), 'spec.replicas')),
      [4, 2, 2],
    );
  });

  it('points every image at the regional mirror and runs tag edge on dev only', () => {
    assert.equal(
      at(find('Deployment', 'eu-west'), 'spec.template.spec.containers[0].image'),
      'mirror.eu-west-1.example.com/shop/web:1.4.2',
    );
    assert.equal(
      at(find('Deployment', 'eu-west'), 'spec.template.spec.initContainers[0].image'),
      'mirror.eu-west-1.example.com/shop/migrate:1.4.2',
    );
    assert.equal(
      at(find('Deployment', 'dev'), 'spec.template.spec.containers[0].image'),
      'mirror.local.example.com/shop/web:edge',
    );
    assert.equal(
      at(find('Deployment', 'dev'), 'spec.template.spec.containers[1].image'),
      'mirror.local.example.com/infra/log-shipper:0.9',
    );
  });

  it('quiets prod logs and debugs dev', () => {
    assert.deepEqual(at(find('Deployment', 'us-east'), 'spec.template.spec.containers[0].args'), [
      '--port=8080',
      '--log-level=warn',
    ]);
    assert.deepEqual(at(find('Deployment', 'dev'), 'spec.template.spec.containers[0].command'), ['/web', '--debug']);
    assert.equal(at(find('Deployment', 'dev'), 'spec.template.spec.containers[0].resources.limits.memory'), '256Mi');
  });

  it('labels, annotates and sets CLUSTER_NAME per cluster', () => {
    const d = find('Deployment', 'us-east');
    assert.equal((at(d, 'metadata.labels') as Record<string, string>)['flotilla.example.com/cluster'], 'us-east');
    assert.equal((at(d, 'metadata.annotations') as Record<string, string>)['example.com/region'], 'us-east1');
    assert.deepEqual(at(d, 'spec.template.spec.containers[0].env'), [{ name: 'CLUSTER_NAME', value: 'us-east' }]);
  });

  it('sends the shared ConfigMap to the prod clusters with their database and beta settings', () => {
    assert.equal(find('ConfigMap', 'dev'), undefined);
    assert.match(
      (at(find('ConfigMap', 'eu-west'), 'data') as Record<string, string>)['app.yaml'] ?? '',
      /host: db\.eu-west-1\.internal/,
    );
    assert.equal(
      (at(find('ConfigMap', 'eu-west'), 'data') as Record<string, string>)['features.json'] ?? '',
      '{"checkout":true,"beta":false}',
    );
    assert.equal(
      (at(find('ConfigMap', 'us-east'), 'data') as Record<string, string>)['features.json'] ?? '',
      '{"checkout":true,"beta":true}',
    );
  });
});
