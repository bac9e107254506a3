// AssignImage (pkg/mutation/mutators/assignimage): sets the domain, path and/or tag of an image reference
// (a string), keeping the parts it does not set.

import { setOwn, str, type JsonObject } from '../json.js';
import { MutationError } from './core.js';
import { checkKeyNotChanged, hasMetadataRoot, MutatorError, mutatorHead, readStart, type Mutator } from './mutator.js';

// Gatekeeper's regular expressions (imageparser.go); `\w` is ASCII in both Go and JavaScript.
const DOMAIN = /(^\w[\w\-_]*\.[\w\-_.]*[\w](:\d+)?$)|(^localhost(:\d+)?$)/;
const PATH = /^[a-z0-9]+(?:(?:(?:[._/]|__|[-]*)[a-z0-9]+)+)?/;
const TAG = /(^:[\w][\w.-]{0,127}$)|(^@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}$)/;

/** A reference's domain: the part before the first `/` when it has a `.` or `:` or is localhost. */
export function splitDomain(name: string): [string, string] {
  const i = name.indexOf('/');
  if (i === -1) return ['', name];
  const head = name.slice(0, i);
  if (!/[.:]/.test(head) && head !== 'localhost') return ['', name];
  return [head, name.slice(i + 1)];
}

function splitTag(remainder: string): [string, string] {
  const m = /[:@]/.exec(remainder);
  return m ? [remainder.slice(0, m.index), remainder.slice(m.index)] : [remainder, ''];
}

export function mutateImage(domain: string, path: string, tag: string, current: string): string {
  const [d0, rest] = splitDomain(current);
  const [p0, t0] = splitTag(rest);
  const d = domain !== '' ? domain : d0;
  const p = path !== '' ? path : p0;
  const t = tag !== '' ? tag : t0;
  return (d !== '' ? `${d}/` : '') + p + t;
}

function imagePartsProblem(domain: string, path: string, tag: string): string | undefined {
  if (domain === '' && path === '' && tag === '')
    return 'at least one of [assignDomain, assignPath, assignTag] must be set';
  if (domain !== '') {
    if (!DOMAIN.test(domain))
      return `assignDomain ${JSON.stringify(domain)} must be a fully-qualified domain name or localhost`;
    const [d, r] = splitDomain(`${domain}/`);
    if (d !== domain || r !== '') return `domain ${JSON.stringify(domain)} could not be recognized as a valid domain`;
  }
  if (path !== '' && path !== (PATH.exec(path)?.[0] ?? ''))
    return `assignPath ${JSON.stringify(path)} must be a valid docker image path`;
  if (tag !== '') {
    if (!TAG.test(tag))
      return `assignTag ${JSON.stringify(tag)} must be a valid docker image tag or digest starting with ':' or '@'`;
    const [p, t] = splitTag(tag);
    if (t !== tag || p !== '') return `tag ${JSON.stringify(tag)} could not be recognized as a valid tag or digest`;
  }
  if (domain === '' && splitDomain(path)[0] !== '')
    return `assignDomain must be set if the first part of assignPath ${JSON.stringify(path)} can be interpreted as part of a domain`;
  return undefined;
}

export function readAssignImage(o: JsonObject): Mutator {
  const start = readStart('AssignImage', o);
  const { name, path, params } = start;
  if (hasMetadataRoot(path)) throw new MutatorError(`assignImage ${name} can't change metadata`, 'metadata');
  if (path.length > 0 && path[path.length - 1]?.type === 'List')
    throw new MutatorError(`assignImage ${name} cannot mutate list-type fields`, 'list-terminal');
  checkKeyNotChanged(path);
  const domain = str(params.assignDomain) ?? '';
  const imagePath = str(params.assignPath) ?? '';
  const tag = str(params.assignTag) ?? '';
  const why = imagePartsProblem(domain, imagePath, tag);
  if (why !== undefined)
    throw new MutatorError(`assignImage ${name} has invalid parameters: ${why}`, 'image-parameters');
  return {
    ...mutatorHead('AssignImage', start),
    terminalType: 'String',
    mustTerminate: true,
    ignored: [],
    setter() {
      return {
        keyedListOkay: false,
        keyedListValue() {
          throw new MutationError('assignimage does not handle keyed lists', 'keyed-list');
        },
        setValue(target: JsonObject, key: string) {
          let current = '';
          if (Object.hasOwn(target, key)) {
            const v = target[key];
            if (typeof v !== 'string')
              throw new MutationError(
                `expected value at AssignImage location to be a string, got ${JSON.stringify(v)}`,
                'not-a-string',
              );
            current = v;
          }
          setOwn(target, key, mutateImage(domain, imagePath, tag, current));
        },
      };
    },
  };
}
