// `flotilla certs create|patch`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (certs.ts) is loaded only when it runs.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { KUBE_FLAGS } from './kubeflags.js';

export const CERTS_CREATE_FLAGS = {
  service: { type: 'string', required: true, value: 'NAME', help: "the webhook's Service" },
  namespace: { type: 'string', required: true, value: 'NAMESPACE', help: "the Service's (and the Secret's) namespace" },
  secret: {
    type: 'string',
    value: 'NAME',
    help: 'store ca.crt, tls.crt and tls.key in this Secret (kept if it exists)',
  },
  'cert-dir': { type: 'string', value: 'DIR', complete: 'directory', help: 'write ca.crt, tls.crt and tls.key here' },
  hosts: { type: 'string', value: 'HOST,...', help: 'extra DNS names or IP addresses for the certificate' },
  'valid-days': {
    type: 'string',
    default: '3650',
    value: 'DAYS',
    help: 'validity of the CA and the certificate (1-36500)',
  },
  ...KUBE_FLAGS,
} as const satisfies Flags;
export type CertsCreateFlags = FlagValues<typeof CERTS_CREATE_FLAGS>;

export const CERTS_PATCH_FLAGS = {
  secret: { type: 'string', required: true, value: 'NAME', help: 'the Secret holding ca.crt' },
  namespace: { type: 'string', required: true, value: 'NAMESPACE', help: "the Secret's namespace" },
  validating: {
    type: 'string',
    value: 'NAME',
    help: 'ValidatingWebhookConfiguration whose webhooks get the CA bundle',
  },
  mutating: { type: 'string', value: 'NAME', help: 'MutatingWebhookConfiguration whose webhooks get the CA bundle' },
  crds: {
    type: 'string',
    value: 'NAME,...',
    help: "CRDs whose conversion webhook gets the CA bundle (default: the four policy.flotilla.io CRDs; '' for none)",
  },
  ...KUBE_FLAGS,
} as const satisfies Flags;
export type CertsPatchFlags = FlagValues<typeof CERTS_PATCH_FLAGS>;

export const CERTS = defineCommand({
  name: 'certs',
  summary: "Create the webhook's serving certificate, or patch its CA into webhook configurations and CRDs",
  description: 'The kube-webhook-certgen flow, so install Jobs can run the flotilla image.',
  flags: {},
  subcommands: [
    defineCommand({
      name: 'create',
      summary: "Create a CA and the webhook's serving certificate, into a Secret and/or files",
      description: `The certificate is for NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.cluster.local, plus --hosts
(DNS names, a wildcard only as the whole first label, or IPv4/IPv6 addresses), valid for --valid-days
(at most 36500). With --secret it is stored in that Secret (type kubernetes.io/tls). An existing Secret
is kept when its certificate still serves, so re-running an install does not rotate the CA under
running webhooks: it parses, its key matches, it is signed by its ca.crt, covers every name above and
expires neither within 30 days nor within a third of --valid-days. Otherwise create says why and
replaces it with a new CA and certificate. With --cert-dir the same three files are written there (the
key 0600, certificates 0644, a directory it creates 0700, whatever the umask). At least one of --secret
and --cert-dir.
The cluster (for --secret) is reached as kubectl reaches it: --kubeconfig, else $KUBECONFIG (every file,
merged), else ~/.kube/config, else the pod's service account.`,
      flags: CERTS_CREATE_FLAGS,
      footer: 'Exit status: 0 ok; 1 failure; 2 usage.',
      load: async () => ({ run: (await import('./certs.js')).create }),
    }),
    defineCommand({
      name: 'patch',
      summary: "Set the Secret's CA as caBundle on webhook configurations and CRD conversion webhooks",
      description: `Reads ca.crt from the Secret and sets it as caBundle on every webhook of the named
ValidatingWebhookConfiguration and MutatingWebhookConfiguration, and on the conversion webhook of each
CRD. A ca.crt that is not PEM CA certificates, at least one of them valid now, is refused. The cluster is reached as kubectl reaches it: --kubeconfig, else $KUBECONFIG (every file, merged),
else ~/.kube/config, else the pod's service account.`,
      flags: CERTS_PATCH_FLAGS,
      footer: 'Exit status: 0 ok; 1 a failure (the others are still patched); 2 usage.',
      load: async () => ({ run: (await import('./certs.js')).patch }),
    }),
  ],
});
