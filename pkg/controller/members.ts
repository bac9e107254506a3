// The member registry: every member cluster the controller can reach, by cluster name. Members come from
// the contexts of --members-kubeconfig, and from every Cluster on the hub whose spec.secretRef names a
// Secret with credentials (credentials.ts). Each Secret is watched: a changed Secret reconnects its
// member, a deleted one disconnects it, without a restart. Every member is probed (GET /readyz) on an
// interval. The registry says what each cluster's Ready condition should be; the cluster status
// reconciler (status.ts) writes it, and the templates are queued again whenever the set of members or
// their readiness changes.

import type { KubeConfig } from '../kube/config.js';

import type { KubeClient } from '../kube/client.js';
import type { Transport } from '../kube/transport.js';
import { Informer, listWatchSource } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Watcher } from '../kube/watch.js';
import type { Logger } from '../runtime/log.js';
import { credentialsFromSecret } from './credentials.js';
import { Member } from './member.js';
import { probeLoop, type Readiness } from './member-probe.js';
import { readyCondition } from './ready-condition.js';
import type { Condition } from './status.js';

export interface MemberAccess {
  name: string;
  /** Holds this member's context as its current context. */
  kubeConfig: KubeConfig;
  /** Requests and watches go here instead of to the KubeConfig's server (unit tests: test/fake-apiserver.ts). */
  transport?: Transport;
}

export interface RegistryOptions {
  hub: KubeClient;
  hubWatcher: Watcher;
  /** Read Cluster objects' spec.secretRef Secrets for credentials. */
  clusterSecrets: boolean;
  probeIntervalMs: number;
  probeTimeoutMs: number;
  memberConcurrency: number;
  userAgent: string;
  logger: Logger;
  /** The Cluster of that name on the hub, as last seen. */
  cluster(name: string): JsonObject | undefined;
  /** A member connected, disconnected or changed readiness (undefined: it went away). */
  onChange(name: string, ready: boolean | undefined): void;
  /** A member was connected: start what it needs (watches of the template kinds). */
  onConnect(member: Member): void;
  /** A change on member `member` to an object the controller applied (drift, status). */
  onOwnedEvent(object: JsonObject, member: string): void;
}

/** A member connected from its Cluster's secretRef. */
interface SecretMember {
  /** `namespace/name` of the Secret. */
  ref: string;
  informer: Informer;
  stop: AbortController;
  /** What the current connection was made from (Secret resourceVersion and the Cluster fields it uses). */
  version?: string;
}

export class MemberRegistry {
  private readonly o: RegistryOptions;
  private readonly members = new Map<string, Member>();
  /** Names of the members from --members-kubeconfig (their Clusters' secretRef is not read). */
  private readonly kubeconfigMembers = new Set<string>();
  private readonly secretMembers = new Map<string, SecretMember>();
  /** Why a cluster has no member (no secretRef, unreadable Secret, refused credentials), and the condition's reason. */
  private readonly noAccess = new Map<string, { why: string; reason: string }>();
  /** Clusters in Pull mode (spec.syncMode): their agent delivers; their readiness comes from its Lease. */
  private readonly pull = new Map<string, Readiness>();
  /** A pull cluster's Ready reason when not the Lease's own (AgentNotJoined: its agent never took it). */
  private readonly pullReason = new Map<string, string>();
  private signal: AbortSignal = new AbortController().signal;

  constructor(o: RegistryOptions, kubeconfigMembers: readonly MemberAccess[]) {
    this.o = o;
    for (const m of kubeconfigMembers) {
      this.kubeconfigMembers.add(m.name);
      this.members.set(m.name, this.newMember(m.name, m.kubeConfig, m.transport));
    }
  }

  get(name: string): Member | undefined {
    return this.members.get(name);
  }

  all(): IterableIterator<Member> {
    return this.members.values();
  }

  names(): string[] {
    return [...this.members.keys()];
  }

  /** The names of the --members-kubeconfig contexts. */
  kubeconfigNames(): string[] {
    return [...this.kubeconfigMembers];
  }

  isKubeconfigMember(name: string): boolean {
    return this.kubeconfigMembers.has(name);
  }

  /** Why cluster `name` has no member, when it has none and the reason is known. */
  whyNoAccess(name: string): string | undefined {
    return this.members.has(name)
      ? undefined
      : (this.noAccess.get(name)?.why ??
          'not a context of --members-kubeconfig, and no Cluster secretRef connected yet');
  }

  /** Whether cluster `name` is in Pull mode: its agent delivers there, the controller does not. */
  isPull(name: string): boolean {
    return this.pull.has(name);
  }

  /** The pull clusters' names. */
  pullNames(): string[] {
    return [...this.pull.keys()];
  }

  /** How cluster `name` is doing: its member's probe, or for a pull cluster its agent's Lease. */
  readiness(name: string): Readiness | undefined {
    return this.pull.get(name) ?? this.members.get(name)?.readiness;
  }

  /** A pull cluster's agent renewed its Lease in time (ready), or did not; `message` says which (`reason`, why not). */
  setAgentLease(name: string, ready: boolean, message: string, reason?: string): void {
    const r = this.pull.get(name);
    if (!r || (r.ready === ready && r.message === message && this.pullReason.get(name) === reason)) return;
    if (reason) this.pullReason.set(name, reason);
    else this.pullReason.delete(name);
    const changed = r.ready !== ready;
    r.ready = ready;
    r.message = message;
    r.unreachable = !ready;
    r.failures = ready ? 0 : r.failures + 1;
    if (changed) {
      r.since = Date.now();
      this.o.logger[ready ? 'info' : 'warn'](ready ? 'pull cluster ready' : 'pull cluster not ready', {
        cluster: name,
        message,
      });
    }
    this.o.onChange(name, ready);
  }

  /** The Ready condition cluster `name` should carry now; undefined before the first probe. */
  condition(name: string): Condition | undefined {
    const pull = this.pull.get(name);
    return readyCondition({
      pull: pull && { readiness: pull, reason: this.pullReason.get(name) },
      member: this.members.get(name),
      noAccess: this.noAccess.get(name),
    });
  }

  /** Starts the probes of the members known so far; later members start as they connect. */
  start(signal: AbortSignal): void {
    this.signal = signal;
    for (const m of this.members.values()) this.startMember(m);
  }

  async close(): Promise<void> {
    await Promise.all([...this.members.values()].map((m) => m.close()));
  }

  /** A Cluster was added or changed on the hub: connect its member from its secretRef, if it has one. */
  onCluster(o: JsonObject): void {
    const name = ownString(o.metadata, 'name') ?? '';
    if (!name || this.kubeconfigMembers.has(name)) return;
    const spec = isObject(o.spec) ? o.spec : {};
    if (ownString(spec, 'syncMode') === 'Pull') {
      // The agent in the cluster delivers: no credential of it is read, and a connection from before goes.
      if (this.pull.has(name)) return;
      this.dropSecretMember(name);
      this.noAccess.delete(name);
      this.pull.set(name, { ready: undefined, failures: 0, since: Date.now() });
      this.o.logger.info('cluster in Pull mode: its agent delivers there', { cluster: name });
      this.o.onChange(name, undefined);
      return;
    }
    this.pullReason.delete(name);
    if (this.pull.delete(name))
      this.o.logger.info('cluster in Push mode again: the controller delivers there', { cluster: name });
    if (!this.o.clusterSecrets) {
      this.setNoAccess(
        name,
        'not a context of --members-kubeconfig (Cluster secretRefs are not read: --cluster-secrets=false)',
      );
      return;
    }
    const ref = isObject(spec.secretRef) ? spec.secretRef : undefined;
    const ns = ownString(ref, 'namespace');
    const secretName = ownString(ref, 'name');
    const refText = ns && secretName ? `${ns}/${secretName}` : undefined;
    const current = this.secretMembers.get(name);
    if (current && current.ref === refText) {
      // Same Secret: the Cluster's apiEndpoint or TLS setting may have changed (Karmada's token form).
      void this.connect(name);
      return;
    }
    if (current) this.dropSecretMember(name);
    if (!ns || !secretName || !refText) {
      this.setNoAccess(name, 'not a context of --members-kubeconfig, and its Cluster has no spec.secretRef');
      return;
    }
    const stop = new AbortController();
    const informer = new Informer({
      name: `hub secret ${refText}`,
      source: listWatchSource(this.o.hub, this.o.hubWatcher),
      path: `/api/v1/namespaces/${encodeURIComponent(ns)}/secrets`,
      apiVersion: 'v1',
      kind: 'Secret',
      fieldSelector: `metadata.name=${secretName}`,
      handlers: {
        onAdd: () => void this.connect(name),
        onUpdate: () => void this.connect(name),
        onDelete: () => void this.connect(name),
      },
      onError: (err, attempt) => {
        if (attempt !== 1) return;
        const text = err instanceof Error ? err.message : String(err);
        this.o.logger.warn('cannot watch the Secret a Cluster names; retrying', {
          cluster: name,
          secret: refText,
          error: text,
        });
        this.setNoAccess(name, `its Secret ${refText} cannot be read: ${text}`);
      },
    });
    this.secretMembers.set(name, { ref: refText, informer, stop });
    void informer.start(AbortSignal.any([this.signal, stop.signal]));
  }

  /** A Cluster was deleted: a member of the kubeconfig stays; one from its secretRef goes. */
  onClusterDeleted(name: string): void {
    if (this.kubeconfigMembers.has(name)) return;
    this.pull.delete(name);
    this.pullReason.delete(name);
    this.dropSecretMember(name);
    this.noAccess.delete(name);
  }

  /** (Re)connects the member of Cluster `name` from its watched Secret, when what it is made from changed. */
  private async connect(name: string): Promise<void> {
    const s = this.secretMembers.get(name);
    const cluster = this.o.cluster(name);
    if (!s || !cluster || this.signal.aborted) return;
    const secret = s.informer.get(s.ref);
    const spec = isObject(cluster.spec) ? cluster.spec : {};
    if (!secret) {
      if (s.informer.synced) this.setNoAccess(name, `its Secret ${s.ref} does not exist`);
      return;
    }
    const version = JSON.stringify([
      ownString(secret.metadata, 'resourceVersion'),
      spec.apiEndpoint,
      spec.insecureSkipTLSVerification,
    ]);
    if (s.version === version) return;
    s.version = version;
    const creds = credentialsFromSecret(spec, secret);
    if ('error' in creds) {
      this.o.logger.error('cannot use the credentials of a Cluster', {
        cluster: name,
        secret: s.ref,
        error: creds.error,
      });
      this.setNoAccess(name, `its Secret ${s.ref}: ${creds.error}`, 'InvalidCredentials');
      return;
    }
    // Two member names for one apiserver would each remove what the other applied for the same template.
    const twin = [...this.members.values()].find((m) => m.name !== name && m.server === creds.server);
    if (twin) {
      this.o.logger.error('not connected: the Cluster reaches the apiserver of another member', {
        cluster: name,
        member: twin.name,
        server: creds.server,
      });
      this.setNoAccess(
        name,
        `its Secret ${s.ref} reaches ${creds.server}, the apiserver of member ${twin.name}`,
        'DuplicateServer',
      );
      return;
    }
    const old = this.members.get(name);
    const m = this.newMember(name, creds.kubeConfig);
    this.members.set(name, m);
    this.noAccess.delete(name);
    if (old) await old.close();
    this.startMember(m);
    this.o.logger.info(
      old ? 'member reconnected: its credentials changed' : 'member connected from its Cluster secretRef',
      { cluster: name, secret: s.ref, server: m.server },
    );
    this.o.onChange(name, m.readiness.ready);
  }

  private dropSecretMember(name: string): void {
    const s = this.secretMembers.get(name);
    if (!s) return;
    s.stop.abort();
    this.secretMembers.delete(name);
    this.disconnect(name, 'member disconnected');
  }

  private disconnect(name: string, message: string): void {
    const m = this.members.get(name);
    if (!m) return;
    this.members.delete(name);
    void m.close();
    this.o.logger.info(message, { cluster: name });
    this.o.onChange(name, undefined);
  }

  /** Cluster `name` has no member: why, in its Ready condition and in the bindings that target it. */
  private setNoAccess(name: string, why: string, reason = 'NoCredentials'): void {
    this.noAccess.set(name, { why, reason });
    if (!this.kubeconfigMembers.has(name)) this.disconnect(name, 'member disconnected');
    this.o.onChange(name, undefined);
  }

  private newMember(name: string, kubeConfig: KubeConfig, transport?: Transport): Member {
    return new Member({
      name,
      kubeConfig,
      ...(transport ? { transport } : {}),
      userAgent: this.o.userAgent,
      concurrency: this.o.memberConcurrency,
      onOwnedEvent: (o) => this.o.onOwnedEvent(o, name),
      onWatchError: (resource, err, attempt) => {
        if (attempt === 1)
          this.o.logger.warn('member watch failed; retrying', {
            member: name,
            resource,
            error: err instanceof Error ? err.message : String(err),
          });
      },
    });
  }

  /** Binds a member to the run, starts its probe loop and what the controller needs on it. */
  private startMember(m: Member): void {
    m.bind(this.signal);
    this.o.onConnect(m);
    const onChange = (member: Member) => {
      if (this.members.get(member.name) !== member) return;
      const r = member.readiness;
      if (r.ready) this.o.logger.info('member ready', { member: member.name });
      else this.o.logger.warn('member not ready; skipped until it is', { member: member.name, error: r.message });
      this.o.onChange(member.name, r.ready);
    };
    const o = { intervalMs: this.o.probeIntervalMs, timeoutMs: this.o.probeTimeoutMs, onChange };
    void probeLoop(m, o, AbortSignal.any([this.signal, m.closed]));
  }
}
