// Container image references, read with the distribution/reference grammar exactly as Karmada's
// imageparser does: `reference.Parse` (no `docker.io/library/` defaulting), then the name split into
// hostname and repository, and a digest dropped when a tag is present. The grammar and the reasons are
// those of distribution/reference v0.6.0 (IPv6 registries; the 255 limit counts the path only) with
// go-digest v1.0.0's digest checks (sha256, sha384 and sha512 known).
//
//   reference  := name [ ":" tag ] [ "@" digest ]
//   name       := [ domain "/" ] path-component { "/" path-component }
//   domain     := ( domain-name | "[" ipv6 "]" ) [ ":" port ]
//   path-component := [a-z0-9]+ { separator [a-z0-9]+ }   separator := "." | "_" | "__" | "-"+
//   tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//   digest     := algorithm ":" hex{32,}
//
// The grammar is scanned by hand over char codes rather than with one large regular expression: the
// override engine parses every container image of every rendered object, and a scan that only slices
// the final components keeps that path free of match arrays and intermediate strings.

export interface ImageReference {
  /** Registry host, with port if any (`registry.example:5000`, `[::1]:5000`, `localhost`); "" when absent. */
  hostname: string;
  /** Path below the registry (`team/app`); "" only after an override removed it. */
  repository: string;
  /** "" when the reference has no tag. */
  tag: string;
  /** `algorithm:hex`; "" when absent, and always "" when `tag` is set. */
  digest: string;
}

/** distribution/reference's RepositoryNameTotalLengthMax, applied to the path below the registry. */
const NAME_TOTAL_LENGTH_MAX = 255;

/** The reason strings distribution/reference and go-digest give, so messages match Karmada's. */
export const ImageParseReason = {
  invalidFormat: 'invalid reference format',
  uppercase: 'repository name must be lowercase',
  empty: 'repository name must have at least one component',
  nameTooLong: `repository name must not be more than ${NAME_TOTAL_LENGTH_MAX} characters`,
  digestFormat: 'invalid checksum digest format',
  digestLength: 'invalid checksum digest length',
  digestUnsupported: 'unsupported digest algorithm',
} as const;

export class ImageParseError extends Error {
  readonly code = 'IMAGE_PARSE';
  /** The image string that failed to parse. */
  readonly image: string;
  /** The grammar's reason alone, one of {@link ImageParseReason}. */
  readonly reason: string;

  constructor(image: string, reason: string, options?: { cause?: unknown }) {
    super(`failed to parse image value(${image}), error: ${reason}`, options);
    this.name = 'ImageParseError';
    this.image = image;
    this.reason = reason;
  }
}

/** A tag is one word character followed by at most 127 more. */
const TAG_LENGTH_MAX = 128;
/** The grammar's digest needs at least this many hex digits; go-digest then checks the exact length. */
const DIGEST_HEX_MIN = 32;

/** Hex length of the digest algorithms go-digest accepts (the ones Karmada links in). */
const DIGEST_HEX_LENGTH: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };

const COLON = 0x3a;
const DOT = 0x2e;
const DASH = 0x2d;
const UNDERSCORE = 0x5f;
const PLUS = 0x2b;
const LBRACKET = 0x5b;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function isLower(c: number): boolean {
  return c >= 0x61 && c <= 0x7a;
}
function isUpper(c: number): boolean {
  return c >= 0x41 && c <= 0x5a;
}
function isLetter(c: number): boolean {
  return isLower(c) || isUpper(c);
}
function isAlnum(c: number): boolean {
  return isDigit(c) || isLetter(c);
}
/** `[a-z0-9]`: the only characters a path component may be made of, apart from separators. */
function isLowerAlnum(c: number): boolean {
  return isDigit(c) || isLower(c);
}
/** RE2's `\w`: ASCII only. */
function isWord(c: number): boolean {
  return isAlnum(c) || c === UNDERSCORE;
}
function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/**
 * Reads one char code, optionally as Go's strings.ToLower would see it. Go lowercases rune by rune with
 * the simple case mapping; besides A–Z only U+0130 (İ) and U+212A (Kelvin sign) map into ASCII, so only
 * they can turn an invalid reference into a valid one.
 */
function charAt(s: string, i: number, fold: boolean): number {
  const c = s.charCodeAt(i);
  if (!fold) return c;
  if (isUpper(c)) return c + 0x20;
  if (c === 0x130) return 0x69;
  if (c === 0x212a) return 0x6b;
  return c;
}

/** `[a-z0-9]+ (separator [a-z0-9]+)*` over [from, to). */
function isPathComponent(s: string, from: number, to: number, fold: boolean): boolean {
  if (from >= to) return false;
  let i = from;
  while (i < to) {
    // One run of [a-z0-9]+.
    const runStart = i;
    while (i < to && isLowerAlnum(charAt(s, i, fold))) i++;
    if (i === runStart) return false;
    if (i === to) return true;
    // One separator, then another run must follow.
    const c = charAt(s, i, fold);
    if (c === DOT) {
      i++;
    } else if (c === UNDERSCORE) {
      i++;
      if (i < to && charAt(s, i, fold) === UNDERSCORE) i++;
    } else if (c === DASH) {
      while (i < to && charAt(s, i, fold) === DASH) i++;
    } else {
      return false;
    }
    if (i === to) return false;
  }
  return true;
}

/** `pathComponent ("/" pathComponent)*` over [from, to). */
function isRemoteName(s: string, from: number, to: number, fold: boolean): boolean {
  let start = from;
  for (;;) {
    let end = s.indexOf('/', start);
    if (end < 0 || end > to) end = to;
    if (!isPathComponent(s, start, end, fold)) return false;
    if (end === to) return true;
    start = end + 1;
  }
}

/** `[a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]` joined by single dots, over [from, to). */
function isDomainName(s: string, from: number, to: number, fold: boolean): boolean {
  if (from >= to) return false;
  let componentStart = from;
  for (let i = from; i <= to; i++) {
    const c = i < to ? charAt(s, i, fold) : DOT;
    if (c === DOT) {
      if (i === componentStart) return false;
      if (charAt(s, i - 1, fold) === DASH) return false;
      componentStart = i + 1;
    } else if (c === DASH) {
      if (i === componentStart) return false;
    } else if (!isAlnum(c)) {
      return false;
    }
  }
  return true;
}

function isPort(s: string, from: number, to: number): boolean {
  if (from >= to) return false;
  for (let i = from; i < to; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

/** `(domainName | "[" [a-fA-F0-9:]+ "]") (":" [0-9]+)?` over [from, to). */
function isDomainAndPort(s: string, from: number, to: number, fold: boolean): boolean {
  if (from >= to) return false;
  let hostEnd: number;
  if (s.charCodeAt(from) === LBRACKET) {
    const close = s.indexOf(']', from);
    if (close < 0 || close >= to || close === from + 1) return false;
    for (let i = from + 1; i < close; i++) {
      const c = charAt(s, i, fold);
      if (!isHex(c) && c !== COLON) return false;
    }
    hostEnd = close + 1;
    if (hostEnd === to) return true;
    if (s.charCodeAt(hostEnd) !== COLON) return false;
  } else {
    const colon = s.indexOf(':', from);
    hostEnd = colon < 0 || colon > to ? to : colon;
    if (!isDomainName(s, from, hostEnd, fold)) return false;
    if (hostEnd === to) return true;
  }
  return isPort(s, hostEnd + 1, to);
}

/** `[domainAndPort "/"] remoteName` over [from, to). */
function isName(s: string, from: number, to: number, fold: boolean): boolean {
  const slash = s.indexOf('/', from);
  if (slash < 0 || slash >= to) return isPathComponent(s, from, to, fold);
  if (!isRemoteName(s, slash + 1, to, fold)) return false;
  return isPathComponent(s, from, slash, fold) || isDomainAndPort(s, from, slash, fold);
}

/** `[\w][\w.-]{0,127}` over [from, to). */
function isTagSpan(s: string, from: number, to: number, fold: boolean): boolean {
  const length = to - from;
  if (length < 1 || length > TAG_LENGTH_MAX) return false;
  if (!isWord(charAt(s, from, fold))) return false;
  for (let i = from + 1; i < to; i++) {
    const c = charAt(s, i, fold);
    if (!isWord(c) && c !== DOT && c !== DASH) return false;
  }
  return true;
}

/**
 * `[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)* ":" [0-9A-Fa-f]{32,}` over [from, to).
 * Returns the index of the ':' between algorithm and hex, or -1 when the span is not a digest.
 */
function digestColon(s: string, from: number, to: number, fold: boolean): number {
  let i = from;
  for (;;) {
    // One algorithm component: a letter, then letters and digits.
    if (i >= to || !isLetter(charAt(s, i, fold))) return -1;
    i++;
    while (i < to && isAlnum(charAt(s, i, fold))) i++;
    if (i >= to) return -1;
    const c = charAt(s, i, fold);
    if (c === COLON) break;
    if (c !== DASH && c !== UNDERSCORE && c !== PLUS && c !== DOT) return -1;
    i++;
  }
  const colon = i;
  if (to - colon - 1 < DIGEST_HEX_MIN) return -1;
  for (let j = colon + 1; j < to; j++) if (!isHex(charAt(s, j, fold))) return -1;
  return colon;
}

/** Where the three parts of a reference end; tagStart/digestStart are -1 when the part is absent. */
interface ReferenceSpans {
  nameEnd: number;
  tagStart: number;
  digestStart: number;
}

/** The whole-string match of distribution/reference's ReferenceRegexp, or undefined. */
function scanReference(s: string, fold: boolean): ReferenceSpans | undefined {
  // Neither name nor tag may contain '@' and neither may the digest, so the first '@' splits them.
  const at = s.indexOf('@');
  const beforeDigest = at < 0 ? s.length : at;
  let digestStart = -1;
  if (at >= 0) {
    if (digestColon(s, at + 1, s.length, fold) < 0) return undefined;
    digestStart = at + 1;
  }
  if (beforeDigest === 0) return undefined;
  // A name holds ':' only inside its registry, which a '/' always follows; so a ':' after the last '/'
  // can only start the tag.
  const lastSlash = s.lastIndexOf('/', beforeDigest - 1);
  const lastColon = s.lastIndexOf(':', beforeDigest - 1);
  let nameEnd = beforeDigest;
  let tagStart = -1;
  if (lastColon > lastSlash) {
    if (!isTagSpan(s, lastColon + 1, beforeDigest, fold)) return undefined;
    nameEnd = lastColon;
    tagStart = lastColon + 1;
  }
  if (!isName(s, 0, nameEnd, fold)) return undefined;
  return { nameEnd, tagStart, digestStart };
}

/**
 * Where distribution/reference's own domain split puts the start of the path: after the first '/' when
 * the text before it is a valid domain (any host-shaped word, unlike {@link splitHostname}'s rule), else
 * at 0. The length limit applies to that path only, so a long registry does not count against it.
 */
function grammarPathStart(s: string, nameEnd: number): number {
  const slash = s.indexOf('/');
  if (slash < 0 || slash >= nameEnd) return 0;
  return isDomainAndPort(s, 0, slash, false) ? slash + 1 : 0;
}

/** go-digest's Digest.Validate for a span the grammar already accepted, or undefined when it is valid. */
function digestProblem(s: string, from: number): string | undefined {
  const colon = s.indexOf(':', from);
  const algorithm = s.slice(from, colon);
  const wanted = DIGEST_HEX_LENGTH[algorithm];
  if (wanted === undefined) {
    // go-digest's own pattern wants a lowercase algorithm; the grammar already guaranteed the rest.
    for (let i = from; i < colon; i++) if (isUpper(s.charCodeAt(i))) return ImageParseReason.digestFormat;
    return ImageParseReason.digestUnsupported;
  }
  if (s.length - colon - 1 !== wanted) return ImageParseReason.digestLength;
  for (let i = colon + 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c) && !(c >= 0x61 && c <= 0x66)) return ImageParseReason.digestFormat;
  }
  return undefined;
}

/**
 * Parses an image reference. Throws {@link ImageParseError} with distribution/reference's reason when
 * the string is not a reference. A reference carrying both a tag and a digest keeps only the tag, as
 * Karmada's imageparser does.
 */
export function parseImage(image: string): ImageReference {
  const spans = scanReference(image, false);
  if (spans === undefined) {
    if (image === '') throw new ImageParseError(image, ImageParseReason.empty);
    if (scanReference(image, true) !== undefined) throw new ImageParseError(image, ImageParseReason.uppercase);
    throw new ImageParseError(image, ImageParseReason.invalidFormat);
  }
  if (spans.nameEnd - grammarPathStart(image, spans.nameEnd) > NAME_TOTAL_LENGTH_MAX) {
    throw new ImageParseError(image, ImageParseReason.nameTooLong);
  }
  if (spans.digestStart >= 0) {
    const problem = digestProblem(image, spans.digestStart);
    if (problem !== undefined) throw new ImageParseError(image, problem);
  }

  const { hostname, repository } = splitHostname(image.slice(0, spans.nameEnd));
  if (spans.tagStart >= 0) {
    const tagEnd = spans.digestStart >= 0 ? spans.digestStart - 1 : image.length;
    return { hostname, repository, tag: image.slice(spans.tagStart, tagEnd), digest: '' };
  }
  return { hostname, repository, tag: '', digest: spans.digestStart >= 0 ? image.slice(spans.digestStart) : '' };
}

/**
 * Karmada's Components.String(): `[hostname/]repository`, then `:tag`, or `@digest` when there is no
 * tag. Pure concatenation: components an override produced are not checked (a removed repository gives
 * `host/:tag`, as in Karmada).
 */
export function formatImage(ref: ImageReference): string {
  const full = ref.hostname === '' ? ref.repository : `${ref.hostname}/${ref.repository}`;
  if (ref.tag !== '') return `${full}:${ref.tag}`;
  if (ref.digest !== '') return `${full}@${ref.digest}`;
  return full;
}

/**
 * Splits a repository name at its first '/' when the part before it names a registry: it contains a
 * '.' or a ':' (a domain, an IP, a port, an IPv6 literal) or is exactly `localhost`. Otherwise the whole
 * name is the repository (`team/app` has no registry).
 */
export function splitHostname(name: string): { hostname: string; repository: string } {
  const slash = name.indexOf('/');
  if (slash < 0) return { hostname: '', repository: name };
  let isRegistry = slash === 9 && name.startsWith('localhost');
  for (let i = 0; !isRegistry && i < slash; i++) {
    const c = name.charCodeAt(i);
    isRegistry = c === DOT || c === COLON;
  }
  if (!isRegistry) return { hostname: '', repository: name };
  return { hostname: name.slice(0, slash), repository: name.slice(slash + 1) };
}

/** Whether `value` is a whole tag (`[\w][\w.-]{0,127}`). */
export function isTag(value: string): boolean {
  return isTagSpan(value, 0, value.length, false);
}

/** Whether `value` has the grammar's digest shape (`algorithm:hex{32,}`), without go-digest's checks. */
export function isDigest(value: string): boolean {
  return digestColon(value, 0, value.length, false) >= 0;
}
