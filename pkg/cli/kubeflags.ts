// The kubectl flags of every command that talks to an apiserver (`--kubeconfig`, `--context`), and the
// one place that turns them and the environment into a KubeConfig. The loader itself (pkg/kube) pulls in
// the Kubernetes client, so it is imported only when a command needs it.

import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '../kube/config.js';
import type { KubeconfigSource } from '../kube/kubeconfig.js';
import { UsageError, type CommandIO, type Flags } from './command.js';

export const KUBECONFIG_FLAG = {
  type: 'string',
  value: 'FILE',
  complete: 'file',
  help: "the kubeconfig file; without it every file in $KUBECONFIG is merged, as kubectl does, else ~/.kube/config, else the pod's service account",
} as const;

export const CONTEXT_FLAG = {
  type: 'string',
  value: 'NAME',
  help: "the kubeconfig context (default: the kubeconfig's current-context)",
} as const;

export const KUBE_FLAGS = { kubeconfig: KUBECONFIG_FLAG, context: CONTEXT_FLAG } as const satisfies Flags;

/** The flags of the commands that read the fleet from the hub with the user's kubeconfig (status, ui). */
export const HUB_READ_FLAGS = {
  'lease-namespace': {
    type: 'string',
    default: 'flotilla-cluster-lease',
    value: 'NS',
    help: "where pull clusters' agents renew their Leases (the controller's --lease-namespace)",
  },
  ...KUBE_FLAGS,
} as const satisfies Flags;

export interface KubeFlagValues {
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

/**
 * What to load, from the flags and the environment: $KUBECONFIG, $HOME (for ~/.kube/config, unless
 * `home` is false) and KUBERNETES_SERVICE_HOST/PORT (in a pod).
 */
export function kubeConfigSource(
  flags: KubeFlagValues,
  env: NodeJS.ProcessEnv,
  options: { home?: boolean } = {},
): KubeconfigSource {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  return {
    ...(flags.kubeconfig !== undefined ? { file: flags.kubeconfig } : {}),
    ...(flags.context !== undefined ? { context: flags.context } : {}),
    ...(env.KUBECONFIG ? { kubeconfigEnv: env.KUBECONFIG } : {}),
    ...(options.home === false ? {} : { homeFile: join(env.HOME || homedir(), '.kube', 'config') }),
    ...(host && port ? { inCluster: { host, port } } : {}),
  };
}

/**
 * Loads the KubeConfig for a command's `--kubeconfig`/`--context`. Finding none is a usage error (exit 2);
 * an unreadable file or an unknown context is a failure (exit 1) whose message says which.
 */
export async function loadKubeConfigFor(
  flags: KubeFlagValues,
  io: CommandIO,
  options: { home?: boolean } = {},
): Promise<KubeConfig> {
  const source = kubeConfigSource(flags, io.env, options);
  const none = (why: string) =>
    new UsageError(`no cluster to talk to: pass --kubeconfig FILE or set $KUBECONFIG; ${why}`);
  // Nothing to try: say so without loading the client.
  if (!source.file && !source.kubeconfigEnv && !source.homeFile && !source.inCluster) throw none('no kubeconfig found');
  const [{ loadContext }, { KubeconfigError }] = await Promise.all([
    import('../kube/kubeconfig.js'),
    import('../kube/errors.js'),
  ]);
  try {
    return loadContext(source);
  } catch (err: unknown) {
    if (err instanceof KubeconfigError && err.code === 'NONE') throw none(err.message);
    throw err;
  }
}
