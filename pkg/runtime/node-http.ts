// node:http's module object, without the ES module namespace an `import … from 'node:http'` builds: that
// namespace reads every export, and three of them (WebSocket, CloseEvent, MessageEvent) are getters that
// load Node's bundled fetch (undici) — about 9 MiB of RSS in every process that imports node:http, used by
// none of them. Types still come from `import type … from 'node:http'`, which loads nothing.

export const http = process.getBuiltinModule('node:http');
