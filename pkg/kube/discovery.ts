// Discovery for one member: apiVersion + kind → resource name and scope, from the apiserver's
// APIResourceLists, fetched once per group-version and kept for the client's lifetime (one run). A CRD
// applied during the run is made visible with forget().

import type { KubeClient } from './client.js';
import { apiError } from './client.js';
import { UnknownKindError } from './errors.js';

export interface ResourceInfo {
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  /** Plural resource name, as in the URL. */
  resource: string;
  namespaced: boolean;
}

interface APIResourceList {
  resources?: Array<{ name?: unknown; kind?: unknown; namespaced?: unknown }>;
}

interface APIGroupList {
  groups?: Array<{ name?: unknown; preferredVersion?: { version?: unknown }; versions?: Array<{ version?: unknown }> }>;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

export class Discovery {
  private readonly client: KubeClient;
  /** groupVersion → kind → resource; undefined when the member does not serve the group-version. */
  private readonly lists = new Map<string, Promise<Map<string, ResourceInfo> | undefined>>();
  private groups: Promise<Map<string, string[]>> | undefined;

  constructor(client: KubeClient) {
    this.client = client;
  }

  /** The resource serving `kind` in `apiVersion`; UnknownKindError when there is none. */
  async resolve(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const kinds = await this.list(apiVersion);
    const info = kinds?.get(kind);
    if (!info) {
      throw new UnknownKindError(
        kinds ? `the member has no kind ${kind} in ${apiVersion}` : `the member does not serve ${apiVersion}`,
      );
    }
    return info;
  }

  /** The resource for a group and kind in the group's preferred version (for kinds recorded without a version). */
  async resolveGroupKind(group: string, kind: string): Promise<ResourceInfo> {
    if (group === '') return this.resolve('v1', kind);
    const versions = (await this.groupVersions()).get(group) ?? [];
    for (const v of versions) {
      const info = (await this.list(`${group}/${v}`))?.get(kind);
      if (info) return info;
    }
    throw new UnknownKindError(
      versions.length === 0
        ? `the member does not serve the API group ${group}`
        : `the member has no kind ${kind} in the API group ${group}`,
    );
  }

  /** Drops what is known about `apiVersion` (and the group list), so the next lookup asks again. */
  forget(apiVersion: string): void {
    this.lists.delete(apiVersion);
    this.groups = undefined;
  }

  private list(apiVersion: string): Promise<Map<string, ResourceInfo> | undefined> {
    let p = this.lists.get(apiVersion);
    if (!p) {
      p = this.fetchList(apiVersion);
      this.lists.set(apiVersion, p);
      // A failed lookup (member unreachable) is not remembered.
      p.catch(() => this.lists.get(apiVersion) === p && this.lists.delete(apiVersion));
    }
    return p;
  }

  private async fetchList(apiVersion: string): Promise<Map<string, ResourceInfo> | undefined> {
    const { group, version } = splitApiVersion(apiVersion);
    if (!/^[a-z0-9.-]*$/.test(group) || !/^[a-z0-9]+$/.test(version)) return undefined;
    const res = await this.client.request<APIResourceList>({
      method: 'GET',
      path: group === '' ? `/api/${version}` : `/apis/${group}/${version}`,
    });
    if (res.status === 404) return undefined;
    if (res.status >= 400) throw apiError(res);
    const out = new Map<string, ResourceInfo>();
    for (const r of res.body?.resources ?? []) {
      if (typeof r.name !== 'string' || typeof r.kind !== 'string' || r.name.includes('/')) continue; // subresources
      if (!out.has(r.kind))
        out.set(r.kind, { group, version, kind: r.kind, resource: r.name, namespaced: r.namespaced === true });
    }
    return out;
  }

  /** group → served versions, preferred first. */
  private groupVersions(): Promise<Map<string, string[]>> {
    this.groups ??= (async () => {
      const res = await this.client.requestOk<APIGroupList>({ method: 'GET', path: '/apis' });
      const out = new Map<string, string[]>();
      for (const g of res.body?.groups ?? []) {
        if (typeof g.name !== 'string') continue;
        const preferred = typeof g.preferredVersion?.version === 'string' ? g.preferredVersion.version : undefined;
        const versions = (g.versions ?? []).map((v) => v.version).filter((v): v is string => typeof v === 'string');
        out.set(g.name, preferred ? [preferred, ...versions.filter((v) => v !== preferred)] : versions);
      }
      return out;
    })();
    const p = this.groups;
    p.catch(() => this.groups === p && (this.groups = undefined));
    return p;
  }
}

/** The URL path of a resource collection (namespace omitted for cluster-scoped ones) or one object in it. */
export function resourcePath(info: ResourceInfo, namespace: string | undefined, name?: string): string {
  const prefix = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${prefix}${ns}/${info.resource}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}
