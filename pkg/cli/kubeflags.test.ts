import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeConfigSource } from './kubeflags.js';

describe('kubeConfigSource', () => {
  it('takes --kubeconfig, --context, $KUBECONFIG, $HOME and the in-cluster address from flags and environment', () => {
    const env = {
      KUBECONFIG: '/a:/b',
      HOME: '/home/me',
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    };
    assert.deepEqual(kubeConfigSource({ kubeconfig: '/k', context: 'c' }, env), {
      file: '/k',
      context: 'c',
      kubeconfigEnv: '/a:/b',
      homeFile: '/home/me/.kube/config',
      inCluster: { host: '10.0.0.1', port: '443' },
    });
  });
  it('leaves out what is not set, and ~/.kube/config when told to', () => {
    assert.deepEqual(kubeConfigSource({}, { HOME: '/home/me', KUBECONFIG: '' }, { home: false }), {});
    assert.deepEqual(kubeConfigSource({}, { HOME: '/home/me', KUBERNETES_SERVICE_HOST: 'h' }), {
      homeFile: '/home/me/.kube/config',
    });
  });
});
